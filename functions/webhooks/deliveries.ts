import { listDeliveries } from '../../lib/data/delivery-log';
import { route } from '../../lib/http/route';
import { webhooksDeliveries } from '../../lib/rows/webhooks';

export const handler = route(webhooksDeliveries, async ({ scope, params }) => ({
  status: 200,
  body: await listDeliveries(scope.webhook.id, params.limit),
}));
