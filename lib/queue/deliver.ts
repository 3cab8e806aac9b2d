import type { SQSRecord } from 'aws-lambda';
import {
  type AttemptRecord,
  claimAttempt,
  type DeliveryMessage,
  type DeliveryRead,
  endWithoutAttempt,
  parseMessage,
  readDelivery,
  recordAttempt,
  releaseClaim,
  releaseLease,
  sendMessage,
  shouldSwitchOff,
  switchOff,
  webhookFailed,
  webhookSucceeded,
} from '../data/deliveries';
import type { DeliveryRecord, WebhookRecord } from '../data/records';
import type { StoredWebhook } from '../data/webhook-creators';
import { openSecret } from '../data/webhook-secrets';
import { parseAllowHosts } from '../domain/webhook-address';
import { ENV } from '../runtime/config';
import { logger } from '../runtime/logger';
import { emitMetric, SERVICE } from '../runtime/metrics';
import { ATTEMPT_TIMEOUT_MS, type AttemptOutcome, attemptDelivery } from '../webhooks/attempt';
import { delayAfter, retrySchedule } from '../webhooks/retry-schedule';
import { ROTATION_OVERLAP_MS, signingSecrets } from '../webhooks/signature';

/**
 * The delivery worker's flow for one queue message (docs/webhooks.md "The pipeline"). The message
 * only names a delivery; the delivery item (read strongly consistent, with its webhook, in one
 * BatchGetItem) says what to do, so a repeated, early or late message is harmless:
 * - the delivery is gone or no longer pending, or the webhook is gone: nothing (acknowledged);
 * - the webhook is switched off, or was switched on again after the delivery's event (its `seq` not
 *   above `from_seq`), and this is no ping: the delivery ends failed, `webhook_disabled`;
 * - the next attempt is not due yet: the message is sent again with the remaining delay, at most
 *   15 minutes (SQS's longest), so a 10-hour wait is 40 short hops;
 * - otherwise the attempt is claimed together with one of the webhook's WEBHOOK_MAX_IN_FLIGHT lease
 *   slots (one transaction: the delivery pending, attempts as read, no live claim, so two copies
 *   never attempt twice; the slot free as read). All slots held: 'busy', the message is sent again
 *   a few seconds later, so one hanging receiver never holds more than its slots of the worker;
 * - the secret is opened; if that took so long that the attempt and its records would outlive the
 *   claim, the claim and the slot are given back and the message sent again ('deferred');
 * - the attempt is made and recorded under the claim, the slot released beside the record; then
 *   the webhook's failure fields, then the next message. Anything that throws leaves the message to
 *   come back after the visibility timeout, and the item tells that run where things stand.
 */

/** What the flow reads from outside, injected in unit tests. */
export interface WorkerDeps {
  now: () => Date;
  attempt: typeof attemptDelivery;
  open: typeof openSecret;
  schedule: () => readonly number[];
  allowHosts: ReadonlySet<string>;
  /** The jitter of a busy message's delay and the choice among free slots. */
  random: () => number;
}

/** A claim outlives the attempt (10 s) and its records, and ends before the message's visibility timeout. */
export const CLAIM_MS = ATTEMPT_TIMEOUT_MS + 20_000;
/**
 * Room kept in the claim, after the attempt's 10 s, for the record and the slot's release (each a
 * write, retried a few times on conflicts). The secret is opened after the claim (KMS Decrypt, no
 * bound of its own); when it took so long that the attempt could outlive the claim and its slot
 * (opened later than CLAIM_MS - ATTEMPT_TIMEOUT_MS - RECORD_MARGIN_MS = 15 s after the claim), no
 * attempt is made: a copy could claim the expired delivery and attempt it too, and a worker the
 * expired slot (a 5th request in flight).
 */
export const RECORD_MARGIN_MS = 5_000;

/**
 * A message whose webhook has every slot held is sent again after 2-6 s (jittered, so a backlog's
 * messages do not come back together): shorter than an attempt's 10 s, so a slot freed is soon used.
 */
export const BUSY_DELAY_SECONDS = { min: 2, max: 6 } as const;
const busyDelaySeconds = (random: () => number) =>
  BUSY_DELAY_SECONDS.min + Math.floor(random() * (BUSY_DELAY_SECONDS.max - BUSY_DELAY_SECONDS.min + 1));

/** The worker's metrics carry the service dimension, as every other metric of the service does. */
const count = (name: string) => emitMetric(name, { service: SERVICE });

export function workerDeps(): WorkerDeps {
  return {
    now: () => new Date(),
    attempt: attemptDelivery,
    open: openSecret,
    schedule: retrySchedule,
    allowHosts: parseAllowHosts(process.env[ENV.webhookAllowHosts]),
    random: Math.random,
  };
}

export type Handled =
  | 'malformed'
  | 'gone'
  | 'not_pending'
  | 'disabled'
  | 'waiting'
  | 'claimed_elsewhere'
  | 'busy'
  | 'deferred'
  | 'delivered'
  | 'retrying'
  | 'failed'
  | 'claim_lost';

export async function deliverMessage(record: Pick<SQSRecord, 'body' | 'messageId'>, deps: WorkerDeps): Promise<Handled> {
  const message = parseMessage(record.body);
  if (!message) {
    logger.warn('webhook queue message is not a delivery; dropped', { messageId: record.messageId });
    return 'malformed';
  }
  const { delivery, webhook, leases } = await readDelivery(message);
  if (!delivery || !webhook) return 'gone';
  if (delivery.status !== 'pending') return 'not_pending';
  const at = deps.now();
  const notNow = await endOrWait(message, delivery, webhook, at);
  if (notNow) return notNow;
  const claim = await claimAttempt(delivery, leases, at, CLAIM_MS, deps.random);
  if (claim.outcome === 'claimed_elsewhere') return 'claimed_elsewhere';
  if (claim.outcome === 'busy') {
    // A new message, and this one acknowledged: receives count towards the dead-letter queue.
    await sendAgainSoon(message, deps);
    return 'busy';
  }
  const release = releaseSlot(webhook.id, claim.slot, claim.token);
  return attemptClaimed({ message, delivery, webhook, at, token: claim.token, release }, deps);
}

/** A delivery as read, with its item's key. */
type Delivery = NonNullable<DeliveryRead['delivery']>;

/** A delivery this run has claimed, with one of its webhook's lease slots. */
interface Claimed {
  message: DeliveryMessage;
  delivery: Delivery;
  webhook: WebhookRecord;
  /** When the claim was made: it ends CLAIM_MS later. */
  at: Date;
  token: string;
  /** Gives the slot back; never throws. */
  release: () => Promise<boolean>;
}

/**
 * A delivery not to attempt now: ended when its webhook is off for it (unless a ping), sent again
 * with the remaining delay when its next attempt is not due yet. Otherwise undefined.
 */
async function endOrWait(
  message: DeliveryMessage,
  delivery: Delivery,
  webhook: WebhookRecord,
  at: Date,
): Promise<'disabled' | 'waiting' | undefined> {
  const isPing = delivery.type === 'webhook.ping';
  // Off, or switched off and on again since this delivery was made (its event is not above the new
  // `from_seq`: a webhook switched on receives only what was committed after).
  if (!isPing && (!webhook.active || (delivery.seq ?? 0) <= ((webhook as StoredWebhook).from_seq ?? 0))) {
    await endWithoutAttempt(delivery, 'webhook_disabled', at);
    return 'disabled';
  }
  const due = delivery.next_attempt_at ? Date.parse(delivery.next_attempt_at) : at.getTime();
  if (due > at.getTime()) {
    await sendMessage(message, (due - at.getTime()) / 1000);
    return 'waiting';
  }
  return undefined;
}

/** The message again after a busy webhook's delay, this one acknowledged. */
async function sendAgainSoon(message: DeliveryMessage, deps: WorkerDeps): Promise<void> {
  await sendMessage(message, busyDelaySeconds(deps.random));
  count('WebhookAttemptDeferred');
}

/** Gives a lease slot back; a failure is logged, not thrown. */
const releaseSlot = (webhookId: string, slot: number, token: string) => () =>
  releaseLease(webhookId, slot, token).catch((error: unknown) => {
    // The slot frees itself at its held_until (the claim's expiry).
    logger.warn('webhook lease not released; it expires with the claim', { webhookId, slot, error });
    return false;
  });

/** A step under the claim; when it throws, the slot is given back before the error goes on. */
async function releasingOnThrow<T>(release: Claimed['release'], step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await release();
    throw error;
  }
}

/** The secret opened, the attempt made (when the claim leaves room for it) and recorded. */
async function attemptClaimed(claimed: Claimed, deps: WorkerDeps): Promise<Handled> {
  const { delivery, webhook, at, release } = claimed;
  const secrets = await releasingOnThrow(release, async () => signingSecrets(await openSecrets(webhook, at, deps), at));
  const opened = deps.now().getTime();
  if (opened + ATTEMPT_TIMEOUT_MS + RECORD_MARGIN_MS > at.getTime() + CLAIM_MS) return deferAttempt(claimed, opened, deps);

  const outcome = await releasingOnThrow(release, () =>
    deps.attempt({ url: webhook.url, id: delivery.id, body: delivery.body, secrets }, { allowHosts: deps.allowHosts }),
  );
  const attemptedAt = deps.now();
  const attempts = (delivery.attempts ?? 0) + 1;
  logAttempt(delivery, attempts, outcome);
  if (outcome.ok) return recordDelivered(claimed, outcome, attemptedAt);
  return recordFailed(claimed, outcome, attemptedAt, attempts, deps);
}

/**
 * Too little of the claim is left for the attempt and its records. The claim and the slot are
 * given back and a new message sent, as for a busy webhook: this message is acknowledged, so a
 * slow KMS never counts a receive toward the dead-letter queue (a throw would, and would hold
 * the delivery until the visibility timeout). The next run usually opens the secret from memory.
 */
async function deferAttempt(
  { message, delivery, webhook, at, token, release }: Claimed,
  opened: number,
  deps: WorkerDeps,
): Promise<'claim_lost' | 'deferred'> {
  const [given] = await Promise.all([releaseClaim(delivery, token), release()]);
  logger.warn('webhook attempt deferred: the secret opened too late for the claim', {
    deliveryId: delivery.id,
    webhookId: webhook.id,
    openedAfterMs: opened - at.getTime(),
  });
  if (!given) return 'claim_lost';
  await sendAgainSoon(message, deps);
  return 'deferred';
}

/** The attempt recorded under the claim, the slot released beside the record; false: the claim was lost. */
async function recordReleasing({ delivery, token, release }: Claimed, attempt: AttemptRecord): Promise<boolean> {
  const [recorded] = await Promise.all([recordAttempt(delivery, token, attempt), release()]);
  return recorded;
}

/** A delivered attempt: recorded, then the webhook is no longer failing. */
async function recordDelivered(claimed: Claimed, outcome: AttemptOutcome, attemptedAt: Date): Promise<Handled> {
  const recorded = await recordReleasing(claimed, {
    status: 'delivered',
    attemptedAt,
    statusCode: outcome.status_code,
    error: null,
    nextAttemptAt: null,
  });
  if (!recorded) return 'claim_lost';
  count('WebhookDelivered');
  await webhookSucceeded(claimed.webhook.board_id, claimed.webhook.id);
  return 'delivered';
}

/** A failed attempt: the delivery pending for its next attempt (and its message sent), or failed at the schedule's end. */
async function recordFailed(
  claimed: Claimed,
  outcome: AttemptOutcome,
  attemptedAt: Date,
  attempts: number,
  deps: WorkerDeps,
): Promise<Handled> {
  const delay = delayAfter(deps.schedule(), attempts);
  const nextAttemptAt = delay === undefined ? null : new Date(attemptedAt.getTime() + delay * 1000);
  const recorded = await recordReleasing(claimed, {
    status: nextAttemptAt ? 'pending' : 'failed',
    attemptedAt,
    statusCode: outcome.status_code,
    error: outcome.error,
    nextAttemptAt,
  });
  if (!recorded) return 'claim_lost';
  count('WebhookAttemptFailed');
  if (!nextAttemptAt) count('WebhookDeliveryFailed');
  // A ping to a webhook already switched off says nothing new about it.
  if (claimed.webhook.active) await keepFailureFields(claimed.webhook, attemptedAt, !nextAttemptAt);
  if (nextAttemptAt) {
    await sendMessage(claimed.message, delay!);
    return 'retrying';
  }
  return 'failed';
}

/** The webhook's secrets, decrypted (from memory for a few minutes): the previous one only while it still signs. */
async function openSecrets(webhook: WebhookRecord, at: Date, deps: WorkerDeps) {
  const ids = { webhookId: webhook.id, boardId: webhook.board_id };
  const rotatedAt = webhook.rotated_at ? Date.parse(webhook.rotated_at) : Number.NaN;
  const previousSigns = webhook.previous_secret_enc && at.getTime() < rotatedAt + ROTATION_OVERLAP_MS;
  const [secret, previous] = await Promise.all([
    deps.open(webhook.secret_enc, ids),
    previousSigns ? deps.open(webhook.previous_secret_enc!, ids) : Promise.resolve(null),
  ]);
  return { secret, previous_secret: previous, rotated_at: webhook.rotated_at ?? null };
}

/**
 * A failed attempt: the webhook has been failing since its first failure after the last success;
 * a delivery that ended failed counts one more in a row. At 50 in a row, or after 5 days of
 * failures, it is switched off, unless an owner's PATCH (which resets the fields) came first.
 */
async function keepFailureFields(webhook: WebhookRecord, at: Date, deliveryEnded: boolean): Promise<void> {
  const fields = await webhookFailed(webhook.board_id, webhook.id, at, deliveryEnded);
  if (!fields || !shouldSwitchOff(fields, at)) return;
  if (await switchOff(webhook.board_id, webhook.id, fields)) {
    count('WebhookDisabled');
    logger.warn('webhook switched off: failing', {
      webhookId: webhook.id,
      boardId: webhook.board_id,
      failedInRow: fields.failed_in_row ?? 0,
      failingSince: fields.failing_since,
    });
  }
}

/** One line per attempt; `detail` (a refused address, a socket error's code) goes to this log only, never to the owner. */
function logAttempt(delivery: DeliveryRecord, attempts: number, outcome: AttemptOutcome): void {
  const fields = {
    deliveryId: delivery.id,
    webhookId: delivery.webhook_id,
    boardId: delivery.board_id,
    type: delivery.type,
    attempt: attempts,
    statusCode: outcome.status_code,
    error: outcome.error,
    detail: outcome.detail,
  };
  if (outcome.ok) logger.info('webhook delivered', fields);
  else logger.warn('webhook attempt failed', fields);
}
