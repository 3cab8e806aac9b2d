import { listWebhooks } from '../../lib/data/webhooks';
import { route } from '../../lib/http/route';
import { webhooksList } from '../../lib/rows/webhooks';

export const handler = route(webhooksList, async ({ scope }) => ({ status: 200, body: await listWebhooks(scope) }));
