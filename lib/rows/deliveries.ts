import { changeRecordFilter } from '../data/changes';
import type { QueueConsumerRow, StreamConsumerRow } from './row';

/**
 * The webhook delivery pipeline's functions (docs/webhooks.md "The pipeline"): the fanout reads
 * the table's stream beside the sockets' broadcaster (the same log-item INSERTs), the worker reads
 * the deliveries queue. Neither is invoked by a request.
 */

export const webhooksFanout = {
  id: 'webhooks.fanout',
  entry: 'functions/webhooks/fanout.ts',
  summary: 'Makes one delivery (item and queue message) per webhook selecting each committed board event',
  filter: changeRecordFilter,
  batchSize: 100,
  // Scheduling is idempotent (conditional Puts, derived ids): retried for an hour, like the broadcaster.
  retryAttempts: 8,
  maxRecordAgeSeconds: 3600,
  // Query: the board's webhooks; BatchGetItem: a delivery already made (a stream retry); PutItem: the
  // delivery; UpdateItem: board.deleted's ttl on the webhooks and their lookups.
  table: ['dynamodb:Query', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  cognito: [],
  queue: ['sqs:SendMessage'],
  env: ['WEBHOOK_QUEUE_URL', 'WEBHOOK_RETRY_SCHEDULE'],
  timeoutSeconds: 60,
} satisfies StreamConsumerRow;

export const webhooksDeliver = {
  id: 'webhooks.deliver',
  entry: 'functions/webhooks/deliver.ts',
  summary: 'Makes the attempts of webhook deliveries: signed POSTs, retried on the schedule, failing webhooks switched off',
  batchSize: 10,
  // A message is received once per hop and per failure of the function itself, never per failed
  // attempt (those are new messages): 5 receives that all threw are a bug, kept in the dead-letter queue.
  maxReceiveCount: 5,
  // One invocation's 10 attempts run in parallel; 10 invocations at most, so a burst of slow
  // endpoints cannot take the account's concurrency from the API; one webhook holds at most
  // WEBHOOK_MAX_IN_FLIGHT (4) attempts of them (lib/data/deliveries.ts).
  maxConcurrency: 10,
  // BatchGetItem: the delivery, its webhook and the webhook's lease slots; TransactWriteItems of an
  // UpdateItem (the claim) and a PutItem (a slot), which IAM grants as those two actions; UpdateItem:
  // the record, the webhook's failure fields and switching it off; DeleteItem: releasing the slot.
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
  cognito: [],
  queue: ['sqs:SendMessage'],
  key: ['kms:Decrypt'],
  env: ['WEBHOOK_QUEUE_URL', 'WEBHOOK_KEY_ID', 'WEBHOOK_RETRY_SCHEDULE', 'WEBHOOK_ALLOW_HOSTS'],
  // 10 attempts of at most 10 s in parallel, their records and the next messages, with room.
  timeoutSeconds: 60,
} satisfies QueueConsumerRow;
