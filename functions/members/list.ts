import { listMembers } from '../../lib/data/members';
import { route } from '../../lib/http/route';

export const handler = route('members.list', async ({ scope }) => ({ status: 200, body: await listMembers(scope) }));
