import { updateLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';
import { labelsUpdate } from '../../lib/rows/labels';

export const handler = route(labelsUpdate, async ({ scope, body }) => ({
  status: 200,
  body: await updateLabel(scope, body),
}));
