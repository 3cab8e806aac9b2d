import { queueConsumers } from '../lib/routes';
import { functionTimeoutSeconds, type QueueConsumerRow } from '../lib/rows/row';

/**
 * The webhook deliveries queue's settings, from the route table, for CDK (infra/webhooks.ts) and
 * the local stand-in (infra/local/sqs.ts) alike, so both run the queue the same way. Plain data:
 * the local stack reads it without loading aws-cdk-lib.
 */
export interface DeliveriesQueueSettings {
  /** The queue's one consumer (the table holds at most one: there is one queue). */
  consumer: QueueConsumerRow | undefined;
  /** 6 x the consumer's function timeout, as AWS advises for an SQS event source. */
  visibilityTimeoutSeconds: number;
  /** 4 days: SQS's default, far past a delivery's longest hop (900 s) and its day of retries. */
  retentionSeconds: number;
  /** 14 days for dead letters: SQS's longest, time to look and to redrive them. */
  deadLetterRetentionSeconds: number;
  /** 256 KiB: the SQS limit the stand-in enforces, set explicitly on AWS (whose default is now 1 MiB). */
  maxMessageBytes: number;
  /** Receives before a message moves to the dead-letter queue (the consumer's row). */
  maxReceiveCount: number;
}

/** Without a consumer row (fixture tables), the queue still exists for senders; 5 receives by default. */
const DEFAULT_MAX_RECEIVE_COUNT = 5;

export function deliveriesQueueSettings(
  consumers: Record<string, QueueConsumerRow> = queueConsumers as Record<string, QueueConsumerRow>,
): DeliveriesQueueSettings {
  const rows = Object.values(consumers);
  if (rows.length > 1) {
    throw new Error(
      `queueConsumers holds ${rows.length} rows (${Object.keys(consumers).join(', ')}), but there is one webhook deliveries queue: one consumer`,
    );
  }
  const consumer = rows[0];
  if (consumer && consumer.maxConcurrency < 2) {
    throw new Error(`${consumer.id}: maxConcurrency must be at least 2 (SQS event sources' minimum)`);
  }
  return {
    consumer,
    visibilityTimeoutSeconds: 6 * functionTimeoutSeconds(consumer ?? {}),
    retentionSeconds: 4 * 24 * 3600,
    deadLetterRetentionSeconds: 14 * 24 * 3600,
    maxMessageBytes: 262_144,
    maxReceiveCount: consumer?.maxReceiveCount ?? DEFAULT_MAX_RECEIVE_COUNT,
  };
}
