import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ENV, requireEnv } from '../runtime/config';
import { stopAtDeadline } from '../runtime/deadline';
import { sdkLogger } from '../runtime/logger';
import { retrySchedule, scheduleSeconds } from '../webhooks/retry-schedule';
import { deliveryId } from '../webhooks/signature';
import { documentClient, getItems, refusalOf, retryingConflicts, tableName, transactNamed } from './db';
import type { DeliveryRecord, DeliveryStatus, LeaseRecord, WebhookRecord } from './records';
import { cancellationCodes } from './sdk-errors';
import { keys, TTL_ATTRIBUTE } from './table';

/**
 * Webhook deliveries (docs/reference.md "Webhooks"; docs/webhooks.md "The pipeline"):
 * the delivery items `WEBHOOK#<id> / DELIVERY#<ms>#<msg id>` and the messages of the deliveries
 * queue that drive their attempts. Storage and the queue only: the attempt itself (address check,
 * signing, HTTP) is lib/webhooks/attempt.ts, and the worker's flow lib/queue/deliver.ts.
 *
 * A message is `{"webhook_id", "board_id", "delivery_sk"}`: it names the delivery, and the item
 * holds everything else (body, status, attempts, when the next attempt is due). So a message may be
 * repeated, late or early: the worker reads the item (strongly consistent) and acts on what it says.
 */

/** An event to deliver to one webhook (the fanout's, one per selecting webhook; ping's, one). */
export interface NewDelivery {
  webhookId: string;
  boardId: string;
  event: { type: string; event_id: string; occurred_at: string; seq?: number } & Record<string, unknown>;
}

/** The body of a deliveries queue message. */
export interface DeliveryMessage {
  webhook_id: string;
  board_id: string;
  delivery_sk: string;
}

/** Deliveries are kept at least 7 days (spec), counted from the end of their schedule. */
const DELIVERY_RETENTION_SECONDS = 7 * 24 * 3600;
/** SQS's longest per-message delay: a longer wait is several hops (lib/queue/deliver.ts). */
const MAX_QUEUE_DELAY_SECONDS = 900;
/** SendMessageBatch takes at most 10 entries. */
const SEND_BATCH = 10;

const sqsClient = new SQSClient({ logger: sdkLogger });
stopAtDeadline(sqsClient);

let cachedQueueUrl: string | undefined;
/** The deliveries queue, read on first use (the rows that send list WEBHOOK_QUEUE_URL and check it at cold start). */
export const queueUrl = () => (cachedQueueUrl ??= requireEnv(ENV.webhookQueueUrl));

const epochSeconds = (ms: number) => Math.floor(ms / 1000);

/** The new item of one delivery: pending, due at once; its body is the event serialised once, the exact bytes every attempt sends and signs. */
export function newDeliveryRecord(item: NewDelivery, at: Date = new Date()): DeliveryRecord & { pk: string; sk: string } {
  const id = deliveryId(item.webhookId, item.event.event_id);
  const key = keys.delivery(item.webhookId, item.event.occurred_at, id);
  return {
    ...key,
    id,
    webhook_id: item.webhookId,
    board_id: item.boardId,
    event_id: item.event.event_id,
    type: item.event.type,
    seq: typeof item.event.seq === 'number' ? item.event.seq : null,
    body: JSON.stringify(item.event),
    status: 'pending',
    attempts: 0,
    last_attempt_at: null,
    last_status_code: null,
    last_error: null,
    next_attempt_at: null,
    occurred_at: item.event.occurred_at,
    ttl: epochSeconds(at.getTime()) + scheduleSeconds(retrySchedule()) + DELIVERY_RETENTION_SECONDS,
  };
}

/**
 * Makes the deliveries and sends their messages. Each item is Put only if absent (a stream retry
 * of the same event makes no second delivery: the id is derived from webhook and event); its
 * message is sent when the Put made it, or when the item is still untouched (pending, never
 * attempted: the earlier run may have stopped between the Put and the send). A repeated message
 * costs nothing: the worker's conditional claim lets one copy attempt. Throws when any item or
 * message failed, so the caller's retry (the stream's, or the ping's client) covers it.
 */
export async function scheduleDeliveries(items: NewDelivery[]): Promise<void> {
  if (items.length === 0) return;
  const records = items.map((item) => newDeliveryRecord(item));
  const toSend: DeliveryMessage[] = [];
  const untouched: typeof records = [];
  await Promise.all(
    records.map(async (record) => {
      try {
        await documentClient.send(
          new PutCommand({ TableName: tableName(), Item: record, ConditionExpression: 'attribute_not_exists(pk)' }),
        );
        toSend.push(messageOf(record));
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        untouched.push(record);
      }
    }),
  );
  if (untouched.length > 0) {
    const found = await getItems(untouched);
    for (const record of untouched) {
      const existing = found.get<DeliveryRecord>(record);
      if (existing?.status === 'pending' && (existing.attempts ?? 0) === 0) toSend.push(messageOf(record));
    }
  }
  await sendMessages(toSend.map((message) => ({ message, delaySeconds: 0 })));
}

const messageOf = (record: Pick<DeliveryRecord, 'webhook_id' | 'board_id'> & { sk: string }): DeliveryMessage => ({
  webhook_id: record.webhook_id,
  board_id: record.board_id,
  delivery_sk: record.sk,
});

/** Sends messages, 10 a call (calls in parallel); throws if any entry failed. */
async function sendMessages(messages: { message: DeliveryMessage; delaySeconds: number }[]): Promise<void> {
  const calls: Promise<void>[] = [];
  for (let i = 0; i < messages.length; i += SEND_BATCH) {
    const chunk = messages.slice(i, i + SEND_BATCH);
    calls.push(
      (async () => {
        if (chunk.length === 1) {
          await sendMessage(chunk[0]!.message, chunk[0]!.delaySeconds);
          return;
        }
        const out = await sqsClient.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl(),
            Entries: chunk.map(({ message, delaySeconds }, n) => ({
              Id: String(n),
              MessageBody: JSON.stringify(message),
              DelaySeconds: clampDelay(delaySeconds),
            })),
          }),
        );
        if (out.Failed && out.Failed.length > 0)
          throw new Error(`SendMessageBatch failed ${out.Failed.length} of ${chunk.length}: ${out.Failed[0]!.Code}`);
      })(),
    );
  }
  await Promise.all(calls);
}

const clampDelay = (seconds: number) => Math.max(0, Math.min(MAX_QUEUE_DELAY_SECONDS, Math.ceil(seconds)));

/** One message, after `delaySeconds` (at most 15 minutes: SQS's limit). */
export async function sendMessage(message: DeliveryMessage, delaySeconds: number): Promise<void> {
  await sqsClient.send(
    new SendMessageCommand({
      QueueUrl: queueUrl(),
      MessageBody: JSON.stringify(message),
      DelaySeconds: clampDelay(delaySeconds),
    }),
  );
}

/** A message body, or undefined for anything that is not one (the worker drops it). */
export function parseMessage(body: string): DeliveryMessage | undefined {
  try {
    const value = JSON.parse(body) as Partial<DeliveryMessage>;
    const ok =
      typeof value.webhook_id === 'string' &&
      typeof value.board_id === 'string' &&
      typeof value.delivery_sk === 'string' &&
      value.delivery_sk.startsWith(keys.deliveryPrefix);
    return ok ? (value as DeliveryMessage) : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The worker's reads and conditional writes (lib/queue/deliver.ts holds the flow).

/**
 * Attempts in flight to one webhook at most (docs/webhooks.md "One webhook's attempts in flight"):
 * its lease slots `#LEASE#0` … `#LEASE#3`. The worker makes at most 100 attempts at once (10
 * invocations of 10), and an invocation lasts as long as its slowest attempt; 4 slots keep a webhook
 * whose receiver hangs to at most 4 of the 10 invocations, while a receiver answering in 200 ms
 * still gets 20 deliveries a second.
 */
export const WEBHOOK_MAX_IN_FLIGHT = 4;
/** How long after its holder's claim ended a slot item is removed (cleanup only: the rule reads `held_until`). */
const LEASE_TTL_SECONDS = 24 * 3600;

type Keyed<T> = T & { pk: string; sk: string };

/** What the worker reads for one message: the delivery, its webhook, and the webhook's slots (by slot number). */
export interface DeliveryRead {
  delivery?: Keyed<DeliveryRecord>;
  webhook?: WebhookRecord;
  leases: (LeaseRecord | undefined)[];
}

/**
 * The delivery a message names, its webhook and the webhook's lease slots, in one strongly
 * consistent BatchGetItem (2 + WEBHOOK_MAX_IN_FLIGHT items).
 */
export async function readDelivery(message: DeliveryMessage): Promise<DeliveryRead> {
  const deliveryKey = { pk: keys.webhookPartition(message.webhook_id), sk: message.delivery_sk };
  const webhookKey = keys.webhook(message.board_id, message.webhook_id);
  const leaseKeys = Array.from({ length: WEBHOOK_MAX_IN_FLIGHT }, (_, n) => keys.webhookLease(message.webhook_id, n));
  const found = await getItems([deliveryKey, webhookKey, ...leaseKeys]);
  return {
    delivery: found.get<Keyed<DeliveryRecord>>(deliveryKey),
    webhook: found.get<WebhookRecord>(webhookKey),
    leases: leaseKeys.map((key) => found.get<LeaseRecord>(key)),
  };
}

const isConditionFailure = (error: unknown) => (error as Error).name === 'ConditionalCheckFailedException';

/** The slots free at `now`: absent, or held by a claim that has expired (its worker died or was cut off). */
const freeSlots = (leases: readonly (LeaseRecord | undefined)[], now: number) =>
  leases.flatMap((lease, slot) => (lease === undefined || lease.held_until <= now ? [slot] : []));

export type Claim =
  | { outcome: 'claimed'; token: string; slot: number }
  /** Another copy of the message claimed the delivery, or it is no longer pending with the attempts read. */
  | { outcome: 'claimed_elsewhere' }
  /** The webhook has WEBHOOK_MAX_IN_FLIGHT attempts in flight (or the slot read free was taken first). */
  | { outcome: 'busy' };

/**
 * Takes the next attempt of a delivery for this invocation, and one of its webhook's slots, in one
 * TransactWriteItems of two items:
 * - the delivery's claim: only while it is pending with the attempts this worker read and no other
 *   live claim. Two copies of one message (SQS delivers at least once; the fanout may send twice)
 *   cannot both attempt: the second's condition fails;
 * - a slot that the read found free (one at random, so that workers spread over the free ones),
 *   Put on condition that it is still exactly as read: absent, or held by the same expired claim.
 * Both last `claimMs` (longer than an attempt and its record), so a worker that died mid-way leaves
 * a claim and a slot that free themselves. No free slot: 'busy' without a write. A slot taken
 * meanwhile by another worker: 'busy' too (no other slot is tried: the read is stale), and so is a
 * transaction that still meets other transactions on its items after transactWrite's retries.
 */
export async function claimAttempt(
  delivery: Pick<DeliveryRecord, 'attempts' | 'webhook_id'> & { pk: string; sk: string },
  leases: readonly (LeaseRecord | undefined)[],
  at: Date,
  claimMs: number,
  random: () => number = Math.random,
): Promise<Claim> {
  const now = at.getTime();
  const free = freeSlots(leases, now);
  if (free.length === 0) return { outcome: 'busy' };
  const slot = free[Math.min(free.length - 1, Math.floor(random() * free.length))]!;
  const seen = leases[slot];
  const token = randomUUID();
  const until = now + claimMs;
  const lease: LeaseRecord & { pk: string; sk: string } = {
    ...keys.webhookLease(delivery.webhook_id, slot),
    webhook_id: delivery.webhook_id,
    slot,
    held_until: until,
    claim_token: token,
    delivery_sk: delivery.sk,
    ttl: Math.floor(until / 1000) + LEASE_TTL_SECONDS,
  };
  try {
    await transactNamed({
      delivery: {
        Update: {
          Key: { pk: delivery.pk, sk: delivery.sk },
          UpdateExpression: 'SET claim_token = :token, claimed_until = :until',
          ConditionExpression:
            '#status = :pending AND attempts = :seen AND (attribute_not_exists(claimed_until) OR claimed_until < :now)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':token': token,
            ':until': until,
            ':now': now,
            ':pending': 'pending',
            ':seen': delivery.attempts ?? 0,
          },
        },
      },
      slot:
        seen === undefined
          ? { Put: { Item: lease, ConditionExpression: 'attribute_not_exists(pk)' } }
          : {
              Put: {
                Item: lease,
                ConditionExpression: 'held_until = :held AND claim_token = :holder AND held_until <= :now',
                ExpressionAttributeValues: { ':held': seen.held_until, ':holder': seen.claim_token, ':now': now },
              },
            },
    });
    return { outcome: 'claimed', token, slot };
  } catch (error) {
    const failed = refusalOf(error, ['delivery', 'slot'] as const)?.failed;
    if (failed?.has('delivery')) return { outcome: 'claimed_elsewhere' };
    if (failed?.has('slot')) return { outcome: 'busy' };
    // Still losing to other transactions on either item after transactWrite's retries (another
    // copy's claim of the delivery, another worker's on the slot): nothing was written and nothing
    // is wrong with the message, so it is 'busy' (sent again a few seconds later, when the read
    // shows who won) rather than a throw that would count a receive toward the dead-letter queue.
    if (cancellationCodes(error)?.includes('TransactionConflict')) return { outcome: 'busy' };
    throw error;
  }
}

/**
 * Frees a slot after its attempt (beside the attempt's record, in parallel): deleted only if it is
 * still this claim's. A slot that expired and was taken by another worker is theirs now; a delete
 * that fails for any other reason is logged by the caller and the slot frees itself at `held_until`.
 * A transaction in flight on the slot (another worker's claim of it) refuses the delete with
 * TransactionConflictException: it is sent again a few times (retryingConflicts).
 */
export async function releaseLease(webhookId: string, slot: number, token: string): Promise<boolean> {
  try {
    await retryingConflicts(() =>
      documentClient.send(
        new DeleteCommand({
          TableName: tableName(),
          Key: keys.webhookLease(webhookId, slot),
          ConditionExpression: 'claim_token = :token',
          ExpressionAttributeValues: { ':token': token },
        }),
      ),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Gives back a claim without an attempt (the worker found it could not finish the attempt within
 * the claim: lib/queue/deliver.ts), so that the message sent again can claim at once rather than
 * being taken for another copy's live claim. Conditional on the claim's token; false when it was
 * lost (expired and taken by another copy, which attempts).
 */
export async function releaseClaim(delivery: { pk: string; sk: string }, token: string): Promise<boolean> {
  return updateUnderClaim(delivery, token, { UpdateExpression: 'REMOVE claim_token, claimed_until' });
}

/**
 * One conditional update of a delivery under the claim that holds it (condition: the claim's
 * token); false when the claim was lost. A duplicate copy's claim transaction in flight on the
 * same delivery refuses the update with TransactionConflictException (the update was not made):
 * it is sent again a few times (retryingConflicts), since the conflict says nothing about the
 * claim, and losing an attempt's record to it would bring the message back and POST a second time.
 */
async function updateUnderClaim(
  delivery: { pk: string; sk: string },
  token: string,
  update: {
    UpdateExpression: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  },
): Promise<boolean> {
  try {
    await retryingConflicts(() =>
      documentClient.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: { pk: delivery.pk, sk: delivery.sk },
          ...update,
          ConditionExpression: 'claim_token = :token',
          ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':token': token },
        }),
      ),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** What one attempt's record changes on the delivery. */
export interface AttemptRecord {
  status: DeliveryStatus;
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

/**
 * Records an attempt under the claim that made it, ending the claim. False when the claim was lost
 * (expired and taken by another copy): that copy records its own.
 */
export async function recordAttempt(
  delivery: { pk: string; sk: string },
  token: string,
  attempt: AttemptRecord,
): Promise<boolean> {
  return updateUnderClaim(delivery, token, {
    UpdateExpression:
      'SET #status = :status, attempts = attempts + :one, last_attempt_at = :at, last_status_code = :code, ' +
      'last_error = :error, next_attempt_at = :next REMOVE claim_token, claimed_until',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':status': attempt.status,
      ':one': 1,
      ':at': attempt.attemptedAt.toISOString(),
      ':code': attempt.statusCode,
      ':error': attempt.error,
      ':next': attempt.nextAttemptAt ? attempt.nextAttemptAt.toISOString() : null,
    },
  });
}

/**
 * Ends a pending delivery without an attempt (its webhook is switched off: `webhook_disabled`).
 * Conditional on pending and no live claim: an attempt in flight records its own outcome.
 */
export async function endWithoutAttempt(delivery: { pk: string; sk: string }, error: string, at: Date): Promise<boolean> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { pk: delivery.pk, sk: delivery.sk },
        UpdateExpression: 'SET #status = :failed, last_error = :error, next_attempt_at = :null',
        ConditionExpression: '#status = :pending AND (attribute_not_exists(claimed_until) OR claimed_until < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':failed': 'failed',
          ':pending': 'pending',
          ':error': error,
          ':null': null,
          ':now': at.getTime(),
        },
      }),
    );
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// The webhook's failure fields (the worker keeps them; the owner's PATCH resets them).

/** Failures before a webhook is switched off: 50 deliveries ended failed in a row, or 5 days of failures. */
export const DISABLE_AFTER_FAILED_DELIVERIES = 50;
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3600 * 1000;

type FailureFields = Pick<WebhookRecord, 'active' | 'failing_since' | 'failed_in_row'>;

/** A success: the webhook is no longer failing. Only on a webhook that still exists. */
export async function webhookSucceeded(boardId: string, webhookId: string): Promise<void> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhook(boardId, webhookId),
        UpdateExpression: 'SET failed_in_row = :zero REMOVE failing_since',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_exists(failing_since) OR failed_in_row > :zero)',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error; // gone, or nothing to reset
  }
}

/**
 * A failed attempt: `failing_since` set if absent, and `failed_in_row` + 1 when the delivery ended
 * failed. Returns the fields as they now are (undefined: the webhook is gone).
 */
export async function webhookFailed(
  boardId: string,
  webhookId: string,
  at: Date,
  deliveryEnded: boolean,
): Promise<FailureFields | undefined> {
  try {
    const out = await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhook(boardId, webhookId),
        UpdateExpression: deliveryEnded
          ? 'SET failing_since = if_not_exists(failing_since, :at), failed_in_row = if_not_exists(failed_in_row, :zero) + :one'
          : 'SET failing_since = if_not_exists(failing_since, :at)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: deliveryEnded
          ? { ':at': at.toISOString(), ':zero': 0, ':one': 1 }
          : { ':at': at.toISOString() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const item = out.Attributes as WebhookRecord | undefined;
    return item && { active: item.active, failing_since: item.failing_since, failed_in_row: item.failed_in_row };
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Whether the failure fields call for switching the webhook off at `at`. */
export function shouldSwitchOff(fields: FailureFields, at: Date): boolean {
  if (!fields.active) return false;
  if ((fields.failed_in_row ?? 0) >= DISABLE_AFTER_FAILED_DELIVERIES) return true;
  const since = fields.failing_since ? Date.parse(fields.failing_since) : Number.NaN;
  return at.getTime() - since >= DISABLE_AFTER_FAILING_MS;
}

/**
 * Switches a failing webhook off (`active` false, `disabled_reason` `failing`), on condition that
 * its failure fields are still those the worker saw: an owner's PATCH that switched it on (and
 * reset them) meanwhile, or a success, wins. True when this call switched it off.
 */
export async function switchOff(boardId: string, webhookId: string, seen: FailureFields): Promise<boolean> {
  const values: Record<string, unknown> = { ':false': false, ':true': true, ':failing': 'failing' };
  let condition = 'attribute_exists(pk) AND active = :true';
  if (seen.failing_since === undefined) condition += ' AND attribute_not_exists(failing_since)';
  else {
    condition += ' AND failing_since = :since';
    values[':since'] = seen.failing_since;
  }
  if (seen.failed_in_row === undefined) condition += ' AND attribute_not_exists(failed_in_row)';
  else {
    condition += ' AND failed_in_row = :count';
    values[':count'] = seen.failed_in_row;
  }
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhook(boardId, webhookId),
        UpdateExpression: 'SET active = :false, disabled_reason = :failing',
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * After `board.deleted` was scheduled: the board's webhooks and their lookups get a `ttl` past
 * the end of the retry schedule (and a day), so the worker can still finish their deliveries and
 * DynamoDB then removes them. Only items that still exist (a webhook deleted meanwhile stays gone).
 */
export async function expireWebhooks(boardId: string, webhookIds: string[], at: Date = new Date()): Promise<void> {
  const ttl = epochSeconds(at.getTime()) + scheduleSeconds(retrySchedule()) + 24 * 3600;
  const itemKeys = webhookIds.flatMap((id) => [keys.webhook(boardId, id), keys.webhookLookup(id)]);
  await Promise.all(
    itemKeys.map(async (key) => {
      try {
        await documentClient.send(
          new UpdateCommand({
            TableName: tableName(),
            Key: key,
            UpdateExpression: 'SET #ttl = :ttl',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
            ExpressionAttributeValues: { ':ttl': ttl },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }),
  );
}
