import { eventsBroadcast } from '../../lib/rows/events';
import { broadcast } from '../../lib/socket/fanout';
import { streamConsumer } from '../../lib/stream/consumer';

/** The table stream's consumer for live events (filtered to stamped changes; see lib/data/changes.ts). */
export const handler = streamConsumer(eventsBroadcast, broadcast);
