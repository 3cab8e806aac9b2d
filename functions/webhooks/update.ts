import { webhookAllowHosts } from '../../lib/contract/webhook-schemas';
import { updateWebhook } from '../../lib/data/webhooks';
import { route } from '../../lib/http/route';
import { webhooksUpdate } from '../../lib/rows/webhooks';

// Read at cold start: a malformed allow list fails here, naming the entry.
webhookAllowHosts();

export const handler = route(webhooksUpdate, async ({ scope, body }) => ({
  status: 200,
  body: await updateWebhook(scope, body),
}));
