import { createBoard } from '../../lib/data/boards';
import { route } from '../../lib/http/route';
import { boardsCreate } from '../../lib/rows/boards';

export const handler = route(boardsCreate, async ({ caller, body }) => ({
  status: 201,
  body: await createBoard(caller.id, body.title),
}));
