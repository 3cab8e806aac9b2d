import { rotateWebhookSecret } from '../../lib/data/webhook-secret-writes';
import { secretKeyId } from '../../lib/data/webhook-secrets';
import { route } from '../../lib/http/route';
import { webhooksRotateSecret } from '../../lib/rows/webhooks';

// Read at cold start: a missing key fails here, naming the variable.
secretKeyId();

export const handler = route(webhooksRotateSecret, async ({ scope }) => ({
  status: 200,
  body: await rotateWebhookSecret(scope),
}));
