import { queueUrl, scheduleDeliveries } from '../../lib/data/deliveries';
import { pingEvent } from '../../lib/data/webhooks';
import { route } from '../../lib/http/route';
import { webhooksPing } from '../../lib/rows/webhooks';
import { retrySchedule } from '../../lib/webhooks/retry-schedule';

// Settings read at cold start: a missing queue or a malformed schedule fails here, naming the variable.
queueUrl();
retrySchedule();

/** One delivery of a new `webhook.ping` event to this webhook alone; the answer never waits for it. */
export const handler = route(webhooksPing, async ({ scope }) => {
  const { webhook } = scope;
  await scheduleDeliveries([{ webhookId: webhook.id, boardId: webhook.board_id, event: pingEvent(webhook) }]);
  return { status: 202 };
});
