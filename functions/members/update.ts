import { changeRole } from '../../lib/data/members';
import { route } from '../../lib/http/route';
import { membersUpdate } from '../../lib/rows/members';

export const handler = route(membersUpdate, async ({ scope, params, body }) => ({
  status: 200,
  body: await changeRole(scope, params.user_id, body.role),
}));
