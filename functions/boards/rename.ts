import { renameBoard } from '../../lib/data/boards';
import { route } from '../../lib/http/route';

export const handler = route('boards.rename', async ({ scope, body }) => ({
  status: 200,
  body: await renameBoard(scope, body.title),
}));
