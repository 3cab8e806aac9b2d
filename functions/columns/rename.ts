import { renameColumn } from '../../lib/data/columns';
import { route } from '../../lib/http/route';
import { columnsRename } from '../../lib/rows/columns';

export const handler = route(columnsRename, async ({ scope, body }) => ({
  status: 200,
  body: await renameColumn(scope, body.title),
}));
