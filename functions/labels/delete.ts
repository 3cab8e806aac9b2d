import { deleteLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';
import { labelsDelete } from '../../lib/rows/labels';

export const handler = route(labelsDelete, async ({ scope }) => {
  await deleteLabel(scope);
  return { status: 204 };
});
