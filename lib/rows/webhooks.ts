import { deliveriesQuery, idParams } from '../contract/schemas';
import { createWebhookBody, updateWebhookBody } from '../contract/webhook-schemas';
import type { RouteRow } from './row';

/**
 * A board's webhooks (../shared/spec/webhooks.md, "Managing webhooks"): owners only, on every route.
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
