import { queueUrl } from '../../lib/data/deliveries';
import { secretKeyId } from '../../lib/data/webhook-secrets';
import { queueConsumer } from '../../lib/queue/consumer';
import { deliverMessage, workerDeps } from '../../lib/queue/deliver';
import { webhooksDeliver } from '../../lib/rows/webhooks';

// Settings read at cold start: a missing key or malformed schedule or allow list fails here, naming the variable.
const deps = workerDeps();
deps.schedule();
secretKeyId();
queueUrl();

/** The deliveries queue's consumer: one attempt per due message (lib/queue/deliver.ts). */
export const handler = queueConsumer(webhooksDeliver, async (record) => {
  await deliverMessage(record, deps);
});
