import { createBoard } from '../../lib/data/boards';
import { route } from '../../lib/http/route';

export const handler = route('boards.create', async ({ caller, body }) => ({
  status: 201,
  body: await createBoard(caller.id, body.title),
}));
