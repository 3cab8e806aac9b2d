import { deleteBoard } from '../../lib/data/boards';
import { route } from '../../lib/http/route';
import { boardsDelete } from '../../lib/rows/boards';

export const handler = route(boardsDelete, async ({ scope }) => {
  await deleteBoard(scope);
  return { status: 204 };
});
