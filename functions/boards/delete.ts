import { deleteBoard } from '../../lib/data/boards';
import { route } from '../../lib/http/route';

export const handler = route('boards.delete', async ({ scope }) => {
  await deleteBoard(scope);
  return { status: 204 };
});
