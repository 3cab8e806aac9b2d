import { deleteLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';

export const handler = route('labels.delete', async ({ scope }) => {
  await deleteLabel(scope);
  return { status: 204 };
});
