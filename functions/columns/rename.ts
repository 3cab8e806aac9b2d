import { renameColumn } from '../../lib/data/columns';
import { route } from '../../lib/http/route';

export const handler = route('columns.rename', async ({ scope, body }) => ({
  status: 200,
  body: await renameColumn(scope, body.title),
}));
