import { addMember } from '../../lib/data/members';
import { route } from '../../lib/http/route';
import { membersAdd } from '../../lib/rows/members';

export const handler = route(membersAdd, async ({ scope, body }) => ({
  status: 201,
  body: await addMember(scope, body.email, body.role),
}));
