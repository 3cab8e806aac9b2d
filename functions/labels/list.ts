import { listLabels } from '../../lib/data/labels';
import { route } from '../../lib/http/route';

export const handler = route('labels.list', async ({ scope }) => ({ status: 200, body: await listLabels(scope) }));
