import { listBoards } from '../../lib/data/boards';
import { route } from '../../lib/http/route';

export const handler = route('boards.list', async ({ caller }) => ({ status: 200, body: await listBoards(caller.id) }));
