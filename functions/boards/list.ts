import { listBoards } from '../../lib/data/boards';
import { boardListTooLarge } from '../../lib/http/oversize';
import { route } from '../../lib/http/route';
import { boardsList } from '../../lib/rows/boards';

export const handler = route(boardsList, async ({ caller }) => {
  const boards = await listBoards(caller.id);
  // Not paginated (the spec): a list over 6 MB (compressed, when the client allows it) names its boards.
  return { status: 200, body: boards, oversize: boardListTooLarge(boards) };
});
