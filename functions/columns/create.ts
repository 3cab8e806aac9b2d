import { createColumn } from '../../lib/data/columns';
import { route } from '../../lib/http/route';

export const handler = route('columns.create', async ({ scope, body }) => ({
  status: 201,
  body: await createColumn(scope, body.title),
}));
