import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { collectDeletions } from '../../lib/data/collect';
import { streamConsumer } from '../../lib/stream/consumer';

/** The table stream's consumer for deletions (filtered to board and column deletion events). */
export const handler = streamConsumer('children.collect', (event: DynamoDBStreamEvent, _context: Context) =>
  collectDeletions(event.Records as Parameters<typeof collectDeletions>[0]),
);
