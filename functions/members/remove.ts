import { removeMember } from '../../lib/data/members';
import { route } from '../../lib/http/route';

export const handler = route('members.remove', async ({ scope, params }) => {
  await removeMember(scope, params.user_id);
  return { status: 204 };
});
