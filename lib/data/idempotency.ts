import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { IdempotencyKeyInUse, IdempotencyKeyReused } from '../domain/errors';
import { outsideDeadline } from '../runtime/deadline';
import { logger } from '../runtime/logger';
import { nowSeconds } from './changes';
import { documentClient, isConditionFailure, itemAtConditionFailure, tableName } from './db';
import { type ItemKey, keyHash, keys, TTL_ATTRIBUTE } from './table';

/**
 * Idempotency-Key records (IETF draft-ietf-httpapi-idempotency-key-header; docs/data-model.md,
 * "Idempotency keys"). A key belongs to the user who sent it, so two users can never see each
 * other's answers. The record holds the fingerprint of the request it was first used for and,
 * once that request succeeded, its answer (opaque text to this layer); it expires 24 hours after
 * the first use.
 *
 * Every write is a conditional PutItem, so the functions that honour keys need no action beyond
 * the PutItem their creates already have. Round trips: a first use costs two (claim, answer); a
 * replay, a reuse with another request and a key in use cost one (the claim, whose failed
 * condition returns the record it found).
 */
const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;

/** How long a client is asked to wait for a request in progress: creates answer in milliseconds. */
const IN_PROGRESS_RETRY_SECONDS = 2;

export interface IdempotencyRequest {
  userId: string;
  /** The client's Idempotency-Key, as sent. */
  key: string;
  /** What makes two requests the same one: the same key with another fingerprint is refused. */
  fingerprint: string;
  /**
   * How long the claim holds: past the request's own deadline, so a request that crashed before
   * answering does not keep its key busy for a day; a retry after that redoes the work.
   */
  lockSeconds: number;
}

/** A key this request holds: only its holder (`owner`) can complete or release it. */
export interface ClaimedKey {
  item: ItemKey;
  owner: string;
  fingerprint: string;
  expiresAt: number;
}

export type Claim = { replay: false; claimed: ClaimedKey } | { replay: true; answer: string };

interface IdempotencyRecord {
  status: 'in_progress' | 'completed';
  fingerprint: string;
  locked_until?: number;
  answer?: string;
}

/** The record of a user's key. Keys are client text of up to 255 characters: hashed, a short key of fixed size. */
export const idempotencyRecordKey = ({ userId, key }: Pick<IdempotencyRequest, 'userId' | 'key'>) =>
  keys.idempotency(userId, keyHash(key));

const record = (claimed: ClaimedKey, fields: Record<string, unknown>) => ({
  ...claimed.item,
  type: 'idempotency',
  fingerprint: claimed.fingerprint,
  owner: claimed.owner,
  [TTL_ATTRIBUTE]: claimed.expiresAt,
  ...fields,
});

/**
 * Claims the key for this request with one conditional put. A key never used, expired (DynamoDB
 * deletes expired items only eventually, hence the condition on `ttl`), released or abandoned by a
 * request that crashed is claimed; otherwise the record found decides: another request's
 * fingerprint is IdempotencyKeyReused, a request still running is IdempotencyKeyInUse, and a
 * finished one's answer is returned for replay.
 */
export async function claimIdempotencyKey(request: IdempotencyRequest): Promise<Claim> {
  const now = nowSeconds();
  const claimed: ClaimedKey = {
    item: idempotencyRecordKey(request),
    owner: randomUUID(),
    fingerprint: request.fingerprint,
    expiresAt: now + IDEMPOTENCY_RETENTION_SECONDS,
  };
  try {
    await documentClient.send(
      new PutCommand({
        TableName: tableName(),
        Item: record(claimed, { status: 'in_progress', locked_until: now + request.lockSeconds }),
        ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :now OR (#status = :inProgress AND locked_until <= :now)',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE, '#status': 'status' },
        ExpressionAttributeValues: { ':now': now, ':inProgress': 'in_progress' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { replay: false, claimed };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // The condition fails only on an item that exists, which DynamoDB then returns; should it
    // not, the client is asked to retry shortly rather than told anything about its key.
    const found = itemAtConditionFailure<IdempotencyRecord>(error);
    if (found && found.fingerprint !== request.fingerprint) throw new IdempotencyKeyReused();
    if (found?.status !== 'completed' || found.answer === undefined) {
      const lockLeft = (found?.locked_until ?? now) - now;
      throw new IdempotencyKeyInUse(Math.max(1, Math.min(lockLeft, IN_PROGRESS_RETRY_SECONDS)));
    }
    return { replay: true, answer: found.answer };
  }
}

/**
 * Writes a claimed record as long as this request still holds it. Outside the request's
 * deadline: the work this follows is done (or failed) whatever the deadline answered, and the
 * record must say so, or a retry would do the work twice. A failure is logged; the claim then
 * lapses like a crashed request's.
 */
async function settle(claimed: ClaimedKey, fields: Record<string, unknown>, what: string): Promise<void> {
  try {
    await outsideDeadline(() =>
      documentClient.send(
        new PutCommand({
          TableName: tableName(),
          Item: record(claimed, fields),
          ConditionExpression: '#owner = :owner AND #status = :inProgress',
          ExpressionAttributeNames: { '#owner': 'owner', '#status': 'status' },
          ExpressionAttributeValues: { ':owner': claimed.owner, ':inProgress': 'in_progress' },
        }),
      ),
    );
  } catch (error) {
    logger.warn(`idempotency key not ${what}`, { error, lostClaim: isConditionFailure(error) });
  }
}

/** Keeps the first request's answer for the retries. */
export const recordIdempotentAnswer = (claimed: ClaimedKey, answer: string) =>
  settle(claimed, { status: 'completed', answer }, 'recorded');

/**
 * Frees the key after the request failed (its error answer is not kept), so that a retry with
 * the same key does the work again, as a retry of a failed request without a key would: the
 * record stays, with a claim that has lapsed.
 */
export const releaseIdempotencyKey = (claimed: ClaimedKey) =>
  settle(claimed, { status: 'in_progress', locked_until: 0 }, 'released');
