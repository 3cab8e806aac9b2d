import { DEFAULT_DELIVERIES_PAGE, deliveriesQuery, idParams, MAX_DELIVERIES_PAGE } from '../contract/schemas';
import { createWebhookBody, updateWebhookBody } from '../contract/webhook-schemas';
import type { QueueConsumerRow, RouteRow } from './row';
import type { RouteText } from './text';

/**
 * A board's webhooks (docs/reference.md, "Webhooks"): owners only, on every route.
 * Create and rotate make a secret, sealed with the webhooks' KMS key (`kms:Encrypt` only: no route
 * ever decrypts one); ping enqueues one delivery. The rows whose bodies carry a URL read
 * WEBHOOK_ALLOW_HOSTS at cold start.
 *
 * Creation honours no Idempotency-Key, as socket tickets do not: its answer holds the secret, and a
 * key's record keeps the first answer in the table for 24 hours, where the secret would lie in
 * clear beside its ciphertext. A client that lost the answer lists the webhooks and deletes or
 * rotates the one it made.
 */

export const webhooksCreate = {
  id: 'webhooks.create',
  method: 'POST',
  path: '/boards/{id}/webhooks',
  entry: 'functions/webhooks/create.ts',
  summary: 'Create a webhook on a board (owners; at most 10 a board); the answer holds its secret',
  access: { scope: 'board', via: 'board', role: 'owner' },
  params: idParams,
  body: createWebhookBody,
  success: { status: 201, schema: 'webhookWithSecret' },
  // The transaction's ConditionCheck: the caller still an owner when the webhook commits.
  table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  key: ['kms:Encrypt'],
  env: ['WEBHOOK_KEY_ID', 'WEBHOOK_ALLOW_HOSTS'],
  errors: [409],
  cognito: [],
} satisfies RouteRow;

export const webhooksCreateText = {
  of: webhooksCreate,
  tag: 'webhooks',
  description:
    "Registers an endpoint for the board's events, signed to the Standard Webhooks specification. Owners only. The answer's `secret` is shown this once (keep it; rotate-secret makes a new one); it is stored only encrypted. At most 10 webhooks a board (409, `code` `limit_reached`). No Idempotency-Key: a key's record would keep the secret; a client that lost the answer lists the webhooks. The URL is refused (400, naming the rule) when it is not an absolute `https` URL of at most 2,048 characters or its host is an IP address of a non-public range, in any of its spellings.",
} satisfies RouteText;

export const webhooksList = {
  id: 'webhooks.list',
  method: 'GET',
  path: '/boards/{id}/webhooks',
  entry: 'functions/webhooks/list.ts',
  summary: "List a board's webhooks, oldest first (owners; no secrets)",
  access: { scope: 'board', via: 'board', role: 'owner' },
  params: idParams,
  success: { status: 200, schema: 'webhookList' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  cognito: [],
} satisfies RouteRow;

export const webhooksListText = {
  of: webhooksList,
  tag: 'webhooks',
  description: "The board's webhooks, oldest first (created_at, then id), without secrets. Owners only.",
} satisfies RouteText;

export const webhooksGet = {
  id: 'webhooks.get',
  method: 'GET',
  path: '/webhooks/{id}',
  entry: 'functions/webhooks/get.ts',
  summary: 'Get a webhook (owners of its board; no secret)',
  access: { scope: 'board', via: 'webhook', role: 'owner' },
  params: idParams,
  success: { status: 200, schema: 'webhook' },
  table: ['dynamodb:BatchGetItem'],
  cognito: [],
} satisfies RouteRow;

export const webhooksGetText = {
  of: webhooksGet,
  tag: 'webhooks',
  description: 'The webhook, without its secret. Owners of its board only.',
} satisfies RouteText;

export const webhooksUpdate = {
  id: 'webhooks.update',
  method: 'PATCH',
  path: '/webhooks/{id}',
  entry: 'functions/webhooks/update.ts',
  summary: 'Change a webhook: url, events, description, active (null or omitted leaves a field as it is)',
  access: { scope: 'board', via: 'webhook', role: 'owner' },
  params: idParams,
  body: updateWebhookBody,
  success: { status: 200, schema: 'webhook' },
  // One transaction: the webhook, the caller still an owner (ConditionCheck), the board item on `active: true`.
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  env: ['WEBHOOK_ALLOW_HOSTS'],
  cognito: [],
} satisfies RouteRow;

export const webhooksUpdateText = {
  of: webhooksUpdate,
  tag: 'webhooks',
  description:
    'Null-safe partial update: a field omitted or sent as null keeps its value; `events: []` selects every event. `active: true` also switches on a webhook the service switched off (`disabled_reason` back to null, failure counts reset). The URL rules are those of creation.',
} satisfies RouteText;

export const webhooksDelete = {
  id: 'webhooks.delete',
  method: 'DELETE',
  path: '/webhooks/{id}',
  entry: 'functions/webhooks/delete.ts',
  summary: 'Delete a webhook; its pending deliveries are dropped',
  access: { scope: 'board', via: 'webhook', role: 'owner' },
  params: idParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'],
  cognito: [],
} satisfies RouteRow;

export const webhooksDeleteText = {
  of: webhooksDelete,
  tag: 'webhooks',
  description:
    'Deletes the webhook: no delivery is attempted for it any more (pending ones are dropped). Its deliveries log expires with it.',
} satisfies RouteText;

export const webhooksRotateSecret = {
  id: 'webhooks.rotate-secret',
  method: 'POST',
  path: '/webhooks/{id}/rotate-secret',
  entry: 'functions/webhooks/rotate-secret.ts',
  summary: 'Give a webhook a new secret; the old one keeps signing beside it for 24 hours',
  access: { scope: 'board', via: 'webhook', role: 'owner' },
  params: idParams,
  success: { status: 200, schema: 'webhookWithSecret' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
  key: ['kms:Encrypt'],
  env: ['WEBHOOK_KEY_ID'],
  cognito: [],
} satisfies RouteRow;

export const webhooksRotateSecretText = {
  of: webhooksRotateSecret,
  tag: 'webhooks',
  description:
    'A new secret, shown this once. The previous one keeps signing beside it for 24 hours (two signatures in `webhook-signature`); a second rotation within them drops the oldest.',
} satisfies RouteText;

export const webhooksPing = {
  id: 'webhooks.ping',
  method: 'POST',
  path: '/webhooks/{id}/ping',
  entry: 'functions/webhooks/ping.ts',
  summary: 'Send a webhook.ping event to this webhook alone (whatever its events and active say)',
  access: { scope: 'board', via: 'webhook', role: 'owner' },
  params: idParams,
  success: { status: 202 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'],
  queue: ['sqs:SendMessage'],
  env: ['WEBHOOK_QUEUE_URL', 'WEBHOOK_RETRY_SCHEDULE'],
  cognito: [],
} satisfies RouteRow;

export const webhooksPingText = {
  of: webhooksPing,
  tag: 'webhooks',
  description:
    'Queues one `webhook.ping` event (`{type, event_id, board_id, webhook_id, occurred_at}`, no `seq`) to this webhook alone, whatever its `events` and `active` say; the answer does not wait for the delivery (see the deliveries log).',
} satisfies RouteText;

export const webhooksDeliveries = {
  id: 'webhooks.deliveries',
  method: 'GET',
  path: '/webhooks/{id}/deliveries',
  entry: 'functions/webhooks/deliveries.ts',
  summary: "List a webhook's deliveries, newest first (limit 1-100, default 20)",
  access: { scope: 'board', via: 'webhook', role: 'owner' },
  params: idParams,
  query: deliveriesQuery,
  success: { status: 200, schema: 'deliveryList' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  cognito: [],
} satisfies RouteRow;

export const webhooksDeliveriesText = {
  of: webhooksDeliveries,
  tag: 'webhooks',
  description:
    "The webhook's deliveries, newest first by the event's time: status, attempts and the latest attempt's outcome. Kept at least 7 days.",
  query: () => ({
    limit: {
      description: `The most deliveries to return, newest first: 1 to ${MAX_DELIVERIES_PAGE}, default ${DEFAULT_DELIVERIES_PAGE}.`,
      schema: {
        type: 'integer',
        format: 'int32',
        minimum: 1,
        maximum: MAX_DELIVERIES_PAGE,
        default: DEFAULT_DELIVERIES_PAGE,
      },
      example: DEFAULT_DELIVERIES_PAGE,
    },
  }),
} satisfies RouteText;

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
