import { webhookAllowHosts } from '../../lib/contract/webhook-schemas';
import { createWebhook } from '../../lib/data/webhook-secret-writes';
import { secretKeyId } from '../../lib/data/webhook-secrets';
import { route } from '../../lib/http/route';
import { webhooksCreate } from '../../lib/rows/webhooks';

// Settings read at cold start: a missing key or a malformed allow list fails here, naming the variable.
secretKeyId();
webhookAllowHosts();

export const handler = route(webhooksCreate, async ({ scope, body }) => ({
  status: 201,
  body: await createWebhook(scope, body),
}));
