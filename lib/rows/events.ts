import { accountDeletionRecordFilter, changeRecordFilter, deletionRecordFilter } from '../data/changes';
import type { ScheduleRow, StreamConsumerRow } from './row';

/**
 * The functions no request invokes: the table stream's two readers and the scheduled sweeper.
 * The stream has exactly two readers (docs/realtime.md "The readers"): DynamoDB Streams throttles
 * a shard read by more than two processes, and a throttled GetRecords delays every reader, the
 * sockets' included. Their ids are those of the readers they took over (the broadcaster's and the
 * board collector's), so that an upgrade keeps each one's event source mapping, its position in
 * the stream and its dead letters (test/infra/upgrade.test.ts).
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

export const childrenCollect = {
  id: 'children.collect',
  entry: 'functions/events/collect.ts',
  summary:
    "Removes a deleted board's items or a deleted column's cards, and takes a deleted account off every board, after the request answered",
  filters: [deletionRecordFilter, accountDeletionRecordFilter],
  batchSize: 10,
  // Every attempt makes progress and is safe to repeat; a day of retries before the DLQ.
  retryAttempts: 100,
  maxRecordAgeSeconds: 24 * 3600,
  // The board and column collector's (Query, BatchWriteItem, UpdateItem; the index's Query) and the
  // account collector's (BatchGetItem, DeleteItem, PutItem, ConditionCheckItem: leaving a board as
  // a removal would, deleting those it owned alone, forgetting its sockets and records).
  table: [
    'dynamodb:Query',
    'dynamodb:BatchGetItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:DeleteItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
  ],
  index: ['dynamodb:Query'],
  cognito: [],
  // A deleted account's sockets are closed.
  manageConnections: true,
  env: ['SOCKET_CALLBACK_URL'],
  timeoutSeconds: 900,
} satisfies StreamConsumerRow;

export const socketsSweep = {
  id: 'sockets.sweep',
  entry: 'functions/events/sweep.ts',
  group: 'live',
  logGroup: 'root',
  summary: 'Closes sockets whose token has expired (token.expired), within a minute of the expiry',
  everyMinutes: 1,
  table: ['dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  cognito: [],
  manageConnections: true,
  env: ['SOCKET_CALLBACK_URL'],
  timeoutSeconds: 50,
} satisfies ScheduleRow;
