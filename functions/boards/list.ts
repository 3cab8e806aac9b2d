import { listBoards } from '../../lib/data/boards';
import { reachesBoard } from '../../lib/domain/personal-tokens';
import { boardListTooLarge } from '../../lib/http/oversize';
import { route } from '../../lib/http/route';
import { boardsList } from '../../lib/rows/boards';

export const handler = route(boardsList, async ({ caller }) => {
  // A personal token limited to boards lists only those.
  const boards = (await listBoards(caller.id)).filter((board) => reachesBoard(caller.personal, board.id));
  // Not paginated (the spec): a list over 6 MB (compressed, when the client allows it) names its boards.
  return { status: 200, body: boards, oversize: boardListTooLarge(boards) };
});
