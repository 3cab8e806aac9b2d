import { createLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';
import { labelsCreate } from '../../lib/rows/labels';

export const handler = route(labelsCreate, async ({ scope, body }) => ({ status: 201, body: await createLabel(scope, body) }));
