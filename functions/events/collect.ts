import { childrenCollect } from '../../lib/rows/events';
import { collectDeletions } from '../../lib/stream/collect';
import { streamConsumer } from '../../lib/stream/consumer';

/** The table stream's consumer for deletions (filtered to board and column deletion events). */
export const handler = streamConsumer(childrenCollect, collectDeletions);
