import { queryPages } from './db';
import type { DeliveryRecord } from './records';
import { keys } from './table';

/**
 * A webhook's deliveries log as `GET /webhooks/{id}/deliveries` shows it (webhooks.md
 * "Deliveries"). Apart from lib/data/deliveries.ts, which also sends the queue's messages, so that
 * this read-only route bundles no SQS client (test/infra/bundle-growth.test.ts holds every bundle
 * to the clients its row is granted).
 */

/** A delivery's public shape (webhooks.md "Delivery"); unknown values are null. */
export type Delivery = Pick<
  DeliveryRecord,
  | 'id'
  | 'event_id'
  | 'type'
  | 'seq'
  | 'status'
  | 'attempts'
  | 'last_attempt_at'
  | 'last_status_code'
  | 'last_error'
  | 'next_attempt_at'
>;

function toDelivery(record: DeliveryRecord): Delivery {
  return {
    id: record.id,
    event_id: record.event_id,
    type: record.type,
    seq: record.seq ?? null,
    status: record.status,
    attempts: record.attempts ?? 0,
    last_attempt_at: record.last_attempt_at ?? null,
    last_status_code: record.last_status_code ?? null,
    last_error: record.last_error ?? null,
    next_attempt_at: record.next_attempt_at ?? null,
  };
}

/** The deliveries of a webhook, newest first (by the event's time), at most `limit`. One strongly consistent Query. */
export async function listDeliveries(webhookId: string, limit: number): Promise<Delivery[]> {
  const found: Delivery[] = [];
  await queryPages(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.webhookPartition(webhookId), ':prefix': keys.deliveryPrefix },
      ExpressionAttributeNames: { '#status': 'status', '#type': 'type' },
      ProjectionExpression:
        'id, event_id, #type, seq, #status, attempts, last_attempt_at, last_status_code, last_error, next_attempt_at',
      ScanIndexForward: false,
      Limit: limit,
    },
    (page) => {
      for (const item of page) if (found.length < limit) found.push(toDelivery(item as unknown as DeliveryRecord));
      return found.length < limit;
    },
  );
  return found;
}
