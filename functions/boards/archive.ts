import { listArchivedCards } from '../../lib/data/archive';
import { route } from '../../lib/http/route';
import { boardsArchive } from '../../lib/rows/boards';

export const handler = route(boardsArchive, async ({ scope }) => ({ status: 200, body: await listArchivedCards(scope) }));
