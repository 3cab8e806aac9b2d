import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type QueueConsumerRow, remainingMsOf } from '../rows/row';
import { invocationChain } from '../runtime/invocation';
import { logger } from '../runtime/logger';

/**
 * The chain of a queue consumer row, as lib/stream/consumer.ts is for stream rows: the shared
 * trigger steps (lib/runtime/invocation.ts) and the partial batch response. Every message of a
 * batch is handled on its own (in parallel): one that throws is reported failed and comes back
 * after the queue's visibility timeout (to the dead-letter queue after the row's `maxReceiveCount`
 * receives); the others are deleted. Shortly before the function would time out, every message not
 * yet handled is reported failed (the work is aborted: no SDK call starts after), so none is lost
 * to a killed invocation; consumers are safe to repeat.
 */
export function queueConsumer(row: QueueConsumerRow, consume: (record: SQSRecord) => Promise<void>) {
  const { id } = row;
  return invocationChain(row, remainingMsOf, (event: SQSEvent, _context: Context) => {
    const pending = new Set(event.Records.map((record) => record.messageId));
    const failed = new Set<string>();
    const answer = (): SQSBatchResponse => ({
      batchItemFailures: [...pending, ...failed].map((itemIdentifier) => ({ itemIdentifier })),
    });
    return {
      work: async () => {
        await Promise.all(
          event.Records.map(async (record) => {
            try {
              await consume(record);
            } catch (error) {
              logger.error('queue message failed; it comes back after the visibility timeout', {
                consumer: id,
                messageId: record.messageId,
                receiveCount: record.attributes?.ApproximateReceiveCount,
                error,
              });
              failed.add(record.messageId);
            } finally {
              pending.delete(record.messageId);
            }
          }),
        );
        return answer();
      },
      onDeadline: () => {
        logger.error('queue batch deadline reached; the unfinished messages come back', {
          consumer: id,
          unfinished: pending.size,
        });
        return answer();
      },
    };
  });
}
