import { toWebhook } from '../../lib/data/webhooks';
import { route } from '../../lib/http/route';
import { webhooksGet } from '../../lib/rows/webhooks';

/** The webhook as the access check read it (strongly consistent, in its second round trip). */
export const handler = route(webhooksGet, async ({ scope }) => ({
  status: 200,
  body: toWebhook(scope.webhook),
}));
