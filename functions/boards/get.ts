import { readBoardTree } from '../../lib/data/boards';
import { boardTooLarge } from '../../lib/http/oversize';
import { route } from '../../lib/http/route';
import { boardsGet } from '../../lib/rows/boards';

export const handler = route(boardsGet, async ({ scope }) => {
  const tree = await readBoardTree(scope);
  // A tree over 6 MB (compressed, when the client allows it) is read one column at a time.
  return { status: 200, body: tree, oversize: boardTooLarge(tree) };
});
