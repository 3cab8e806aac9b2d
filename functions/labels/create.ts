import { createLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';

export const handler = route('labels.create', async ({ scope, body }) => ({ status: 201, body: await createLabel(scope, body) }));
