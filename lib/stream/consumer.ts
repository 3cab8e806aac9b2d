import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { ChangeRecord } from '../data/change-events';
import { remainingMsOf, type StreamConsumerRow } from '../rows/row';
import { ENV, requireEnv } from '../runtime/config';
import { raceDeadline } from '../runtime/deadline';
import { beginInvocation, logger } from '../runtime/logger';
import { countColdStart } from '../runtime/metrics';

/**
 * The chain of a stream consumer row, as lib/http/chain.ts is for HTTP rows: the cold-start
 * count and the deadline. Shortly before the function would time out, the batch's first record
 * is reported failed (the work is aborted: no SDK retry starts after), so the event source runs
 * it again instead of Lambda killing the invocation mid-way; consumers are safe to repeat. The
 * handler passes its own row (lib/rows/events.ts), so that no other row is in its bundle.
 */
export function streamConsumer(row: StreamConsumerRow, consume: (records: ChangeRecord[]) => Promise<DynamoDBBatchResponse>) {
  const { id } = row;
  if (row.table.length > 0) requireEnv(ENV.tableName);
  return (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
    beginInvocation(context);
    countColdStart(row.entry);
    const remaining = remainingMsOf(context, row);
    return raceDeadline(
      remaining,
      // Lambda's stream types and the SDK's AttributeValue describe the same JSON images.
      () => consume(event.Records as ChangeRecord[]),
      () => {
        logger.error('stream batch deadline reached; the batch runs again', { consumer: id });
        const first = event.Records[0]?.dynamodb?.SequenceNumber;
        return { batchItemFailures: first ? [{ itemIdentifier: first }] : [] };
      },
    );
  };
}
