import { renameBoard } from '../../lib/data/boards';
import { route } from '../../lib/http/route';
import { boardsRename } from '../../lib/rows/boards';

export const handler = route(boardsRename, async ({ scope, body }) => ({
  status: 200,
  body: await renameBoard(scope, body.title),
}));
