import { queueUrl } from '../../lib/data/deliveries';
import { eventsBroadcast } from '../../lib/rows/events';
import { streamConsumer } from '../../lib/stream/consumer';
import { publishChanges } from '../../lib/stream/publish';
import { retrySchedule } from '../../lib/webhooks/retry-schedule';

// Settings read at cold start: a malformed schedule or a missing queue fails here, naming the variable.
retrySchedule();
queueUrl();

/** The table stream's change reader: each committed change to the board's watchers and its webhooks (lib/stream/publish.ts). */
export const handler = streamConsumer(eventsBroadcast, publishChanges);
