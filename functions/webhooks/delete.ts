import { deleteWebhook } from '../../lib/data/webhooks';
import { route } from '../../lib/http/route';
import { webhooksDelete } from '../../lib/rows/webhooks';

export const handler = route(webhooksDelete, async ({ scope }) => {
  await deleteWebhook(scope);
  return { status: 204 };
});
