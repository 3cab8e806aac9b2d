import { readColumnWithCards } from '../../lib/data/columns';
import { route } from '../../lib/http/route';

export const handler = route('columns.get', async ({ scope }) => ({ status: 200, body: await readColumnWithCards(scope) }));
