import { fanOut } from '../data/webhook-fanout';
import { broadcast } from '../socket/fanout';
import { type Consume, sideBySide } from './compose';

/**
 * The change reader (`events.broadcast`, docs/realtime.md "The readers"): each batch of log-item
 * INSERTs goes to the board's watchers (lib/socket/fanout.ts) and, side by side, becomes the
 * board's webhook deliveries (lib/data/webhook-fanout.ts), each part exactly as it ran alone. The
 * earliest record either part failed is the checkpoint, from which the batch runs again for both:
 * watchers may get a frame twice (at least once; they drop repeats by event_id) and the fanout
 * makes no second delivery (derived ids, conditional Puts). A part that keeps failing holds the
 * shard for both, until it succeeds or the records age out (an hour).
 */
export const publishChanges: Consume = sideBySide({
  sockets: broadcast,
  webhooks: async (records) => ({
    batchItemFailures: (await fanOut(records)).map((itemIdentifier) => ({ itemIdentifier })),
  }),
});
