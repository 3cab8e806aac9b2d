import { updateLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';

export const handler = route('labels.update', async ({ scope, body }) => ({ status: 200, body: await updateLabel(scope, body) }));
