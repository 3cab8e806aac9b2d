import { readBoardTree, treeViewOf } from '../../lib/data/boards';
import { boardTreeETag, currentBoardTag } from '../../lib/data/etags';
import { seqOf } from '../../lib/data/event-log';
import { boardTooLarge } from '../../lib/http/oversize';
import { route } from '../../lib/http/route';
import { boardsGet } from '../../lib/rows/boards';

/**
 * A re-read whose If-None-Match names the tree at the board's current `seq` is a 304 from the
 * board item alone (read with the membership): nothing of the columns or cards is read. `*` needs
 * the tree's tag, so it reads the tree and answers 304 with it.
 */
export const handler = route(boardsGet, async ({ scope, params, conditions }) => {
  const seq = seqOf(scope.board);
  const view = treeViewOf(params);
  const { ifNoneMatch } = conditions;
  const held = Array.isArray(ifNoneMatch) ? currentBoardTag(ifNoneMatch, scope.boardId, seq, view) : undefined;
  if (held) return { status: 304, headers: { etag: held } };
  const tree = await readBoardTree(scope, params);
  const etagOf = (json: string) => boardTreeETag(scope.boardId, seq, json, view);
  if (ifNoneMatch === '*') return { status: 304, headers: { etag: etagOf(JSON.stringify(tree)) } };
  // A tree over 6 MB (compressed, when the client allows it) is read one column at a time.
  return { status: 200, body: tree, etagOf, oversize: boardTooLarge(tree) };
});
