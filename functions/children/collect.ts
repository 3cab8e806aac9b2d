import { childrenCollect } from '../../lib/rows/children';
import { streamConsumer } from '../../lib/stream/consumer';
import { collectDeleted } from '../../lib/stream/deletions';

/** The table stream's cleanup reader: board, column and account deletions, each to its collector (lib/stream/deletions.ts). */
export const handler = streamConsumer(childrenCollect, collectDeleted);
