import { listLabels } from '../../lib/data/labels';
import { route } from '../../lib/http/route';
import { labelsList } from '../../lib/rows/labels';

export const handler = route(labelsList, async ({ scope }) => ({ status: 200, body: await listLabels(scope) }));
