import { createColumn } from '../../lib/data/columns';
import { route } from '../../lib/http/route';
import { columnsCreate } from '../../lib/rows/columns';

export const handler = route(columnsCreate, async ({ scope, body }) => ({
  status: 201,
  body: await createColumn(scope, body.title),
}));
