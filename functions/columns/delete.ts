import { deleteColumn } from '../../lib/data/columns';
import { route } from '../../lib/http/route';
import { columnsDelete } from '../../lib/rows/columns';

export const handler = route(columnsDelete, async ({ scope }) => {
  await deleteColumn(scope);
  return { status: 204 };
});
