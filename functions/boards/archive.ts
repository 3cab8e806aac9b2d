import { listArchivedCards } from '../../lib/data/archive';
import { archiveTooLarge } from '../../lib/http/oversize';
import { route } from '../../lib/http/route';
import { boardsArchive } from '../../lib/rows/boards';

export const handler = route(boardsArchive, async ({ scope }) => {
  const cards = await listArchivedCards(scope);
  // An archive over 6 MB (compressed, when the client allows it) is read one card at a time.
  return { status: 200, body: cards, oversize: archiveTooLarge(cards) };
});
