import { createBoard } from '../../lib/data/boards';
import { heldCount } from '../../lib/http/rate-limit';
import { route } from '../../lib/http/route';
import { boardsCreate } from '../../lib/rows/boards';

// The rate limiter's count goes in the create's own transaction (no round trip before it).
export const handler = route(boardsCreate, async ({ caller, body }) => ({
  status: 201,
  body: await createBoard(caller.id, body.title, heldCount()),
}));
