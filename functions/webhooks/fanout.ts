import { queueUrl } from '../../lib/data/deliveries';
import { fanOut } from '../../lib/data/webhook-fanout';
import { webhooksFanout } from '../../lib/rows/deliveries';
import { streamConsumer } from '../../lib/stream/consumer';
import { retrySchedule } from '../../lib/webhooks/retry-schedule';

// Settings read at cold start: a malformed schedule fails here, naming the variable.
retrySchedule();
queueUrl();

/** The table stream's consumer for webhooks: one delivery per selecting webhook and event (lib/data/webhook-fanout.ts). */
export const handler = streamConsumer(webhooksFanout, async (records) => ({
  batchItemFailures: (await fanOut(records)).map((itemIdentifier) => ({ itemIdentifier })),
}));
