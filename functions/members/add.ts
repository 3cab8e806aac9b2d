import { addMember } from '../../lib/data/members';
import { route } from '../../lib/http/route';

export const handler = route('members.add', async ({ scope, body }) => ({
  status: 201,
  body: await addMember(scope, body.email, body.role),
}));
