import { removeMember } from '../../lib/data/members';
import { route } from '../../lib/http/route';
import { membersRemove } from '../../lib/rows/members';

export const handler = route(membersRemove, async ({ scope, params }) => {
  await removeMember(scope, params.user_id);
  return { status: 204 };
});
