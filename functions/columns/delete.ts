import { scopeVia } from '../../lib/data/access';
import { deleteColumn } from '../../lib/data/columns';
import { route } from '../../lib/http/route';
import { columnsDelete } from '../../lib/rows/columns';

export const handler = route(columnsDelete, async ({ scope }) => {
  await deleteColumn(scopeVia(scope, 'column'));
  return { status: 204 };
});
