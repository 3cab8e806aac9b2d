import { listMembers } from '../../lib/data/members';
import { route } from '../../lib/http/route';
import { membersList } from '../../lib/rows/members';

export const handler = route(membersList, async ({ scope }) => ({ status: 200, body: await listMembers(scope) }));
