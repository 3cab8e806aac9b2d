import { readBoardTree } from '../../lib/data/boards';
import { route } from '../../lib/http/route';

export const handler = route('boards.get', async ({ scope }) => ({ status: 200, body: await readBoardTree(scope) }));
