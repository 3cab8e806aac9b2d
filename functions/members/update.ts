import { changeRole } from '../../lib/data/members';
import { route } from '../../lib/http/route';

export const handler = route('members.update', async ({ scope, params, body }) => ({
  status: 200,
  body: await changeRole(scope, params.user_id, body.role),
}));
