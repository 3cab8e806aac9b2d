import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { ChangeRecord } from '../data/change-events';
import { remainingMsOf, type StreamConsumerRow } from '../rows/row';
import { invocationChain } from '../runtime/invocation';
import { logger } from '../runtime/logger';

/**
 * The chain of a stream consumer row, as lib/http/chain.ts is for HTTP rows: the shared trigger
 * steps (lib/runtime/invocation.ts) and the deadline's answer. Shortly before the function would
 * time out, the batch's first record is reported failed (the work is aborted: no SDK retry starts
 * after), so the event source runs it again instead of Lambda killing the invocation mid-way;
 * consumers are safe to repeat. The handler passes its own row (lib/rows/events.ts or lib/rows/children.ts), so that no
 * other row is in its bundle.
 */
export function streamConsumer(row: StreamConsumerRow, consume: (records: ChangeRecord[]) => Promise<DynamoDBBatchResponse>) {
  return invocationChain(row, remainingMsOf, (event: DynamoDBStreamEvent, _context: Context) => ({
    // Lambda's stream types and the SDK's AttributeValue describe the same JSON images.
    work: () => consume(event.Records as ChangeRecord[]),
    onDeadline: (): DynamoDBBatchResponse => {
      logger.error('stream batch deadline reached; the batch runs again', { consumer: row.id });
      const first = event.Records[0]?.dynamodb?.SequenceNumber;
      return { batchItemFailures: first ? [{ itemIdentifier: first }] : [] };
    },
  }));
}
