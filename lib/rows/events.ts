import { changeRecordFilter } from '../data/changes';
import type { StreamConsumerRow } from './row';

/**
 * The table stream's change reader. The stream has exactly two readers, this one and the cleanup
 * reader (`children.collect`, lib/rows/children.ts; docs/realtime.md "The readers"): DynamoDB
 * Streams throttles a shard read by more than two processes, and a throttled GetRecords delays
 * every reader, the sockets' included. Its id is that of the reader it took over (the
 * broadcaster's), so that an upgrade keeps its event source mapping, its position in the stream
 * and its dead letters (test/infra/upgrade.test.ts).
 */

export const eventsBroadcast = {
  id: 'events.broadcast',
  entry: 'functions/events/broadcast.ts',
  summary: "Sends each committed board change to the board's watchers and makes its webhook deliveries",
  filters: [changeRecordFilter],
  batchSize: 100,
  // Both parts are safe to repeat (frames: at least once, dropped by event_id; deliveries: derived
  // ids, conditional Puts): an hour of retries, then the batch is described in the dead letters.
  retryAttempts: 8,
  maxRecordAgeSeconds: 3600,
  // The broadcaster's (Query: the audience; DeleteItem, BatchWriteItem: gone sockets and ended
  // watches; UpdateItem) and the fanout's (Query: the board's webhooks; BatchGetItem: a delivery
  // already made; PutItem: the delivery; UpdateItem: board.deleted's ttl on the webhooks).
  table: [
    'dynamodb:Query',
    'dynamodb:BatchGetItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
  ],
  cognito: [],
  manageConnections: true,
  queue: ['sqs:SendMessage'],
  env: ['SOCKET_CALLBACK_URL', 'WEBHOOK_QUEUE_URL', 'WEBHOOK_RETRY_SCHEDULE'],
  timeoutSeconds: 60,
} satisfies StreamConsumerRow;
