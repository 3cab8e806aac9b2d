import type { QueueConsumerRow } from './row';

/**
 * The webhook delivery pipeline's worker (docs/webhooks.md "The pipeline"): it reads the
 * deliveries queue, which the change reader (`events.broadcast`, lib/rows/events.ts) fills beside
 * the sockets. No request invokes it.
 */

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
