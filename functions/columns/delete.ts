import { deleteColumn } from '../../lib/data/columns';
import { route } from '../../lib/http/route';

export const handler = route('columns.delete', async ({ scope }) => {
  await deleteColumn(scope);
  return { status: 204 };
});
