import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { IdempotencyKeyInUse, IdempotencyKeyReused } from '../domain/errors';
import { logger } from '../runtime/logger';
import { documentClient, isConditionFailure, tableName } from './db';
import { keys, TTL_ATTRIBUTE } from './table';

/**
 * Idempotency-Key records (IETF draft-ietf-httpapi-idempotency-key-header; docs/data-model.md,
 * "Idempotency keys"). A key belongs to the user who sent it, so two users can never see each
 * other's answers. The record holds the SHA-256 fingerprint of the request it was first used for
 * and, once that request succeeded, its answer; it expires 24 hours after the first use.
 *
 * Round trips: the first use costs two writes (claim, then the answer); a replay, a reuse with
 * another request and a key in use cost one (the claim's conditional put, which returns the
 * record it found in the same round trip).
 */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;

/** What a successful first request answered, replayed to every retry with the same key. */
export interface StoredAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface IdempotencyRequest {
  userId: string;
  /** The client's Idempotency-Key, as sent. */
  key: string;
  /** What makes two requests the same one (lib/http/idempotency.ts): the same key with another is 422. */
  fingerprint: string;
  /**
   * How long the claim holds: past the request's own deadline, so a request that crashed before
   * answering does not keep its key busy for a day; a retry after that redoes the work.
   */
  lockSeconds: number;
}

interface IdempotencyRecord {
  status: 'in_progress' | 'completed';
  fingerprint: string;
  locked_until?: number;
  answer?: string;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
/** The record of a user's key. Keys are client text of up to 255 characters: hashed, a short key of fixed size. */
export const idempotencyRecordKey = ({ userId, key }: Pick<IdempotencyRequest, 'userId' | 'key'>) =>
  keys.idempotency(userId, createHash('sha256').update(key).digest('base64url'));

export type Claim = { replay: false } | { replay: true; answer: StoredAnswer };

/**
 * Claims the key for this request with one conditional put. A key never used, expired (DynamoDB
 * deletes expired items only eventually, hence the condition on `ttl`) or abandoned by a request
 * that crashed is claimed; otherwise the record found decides: another request's fingerprint is
 * IdempotencyKeyReused, a request still running is IdempotencyKeyInUse, and a finished one's
 * answer is replayed.
 */
export async function claimIdempotencyKey(request: IdempotencyRequest): Promise<Claim> {
  const now = nowSeconds();
  try {
    await documentClient.send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...idempotencyRecordKey(request),
          type: 'idempotency',
          status: 'in_progress',
          fingerprint: request.fingerprint,
          locked_until: now + request.lockSeconds,
          [TTL_ATTRIBUTE]: now + IDEMPOTENCY_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :now OR (#status = :inProgress AND locked_until <= :now)',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE, '#status': 'status' },
        ExpressionAttributeValues: { ':now': now, ':inProgress': 'in_progress' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { replay: false };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const found = (error as { Item?: Record<string, AttributeValue> }).Item;
    // The condition fails only on an item that exists, which DynamoDB then returns; should it
    // not, the client is asked to retry shortly rather than told anything about its key.
    if (!found) throw new IdempotencyKeyInUse(1);
    const record = unmarshall(found) as IdempotencyRecord;
    if (record.fingerprint !== request.fingerprint) throw new IdempotencyKeyReused();
    if (record.status !== 'completed' || record.answer === undefined) {
      throw new IdempotencyKeyInUse(Math.max(1, (record.locked_until ?? now) - now));
    }
    return { replay: true, answer: JSON.parse(record.answer) as StoredAnswer };
  }
}

/**
 * Keeps the first request's answer for the retries. The work is done and answered whatever
 * happens here: a failure is logged, and the claim then lapses like a crashed request's.
 */
export async function recordIdempotentAnswer(request: IdempotencyRequest, answer: StoredAnswer): Promise<void> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: idempotencyRecordKey(request),
        UpdateExpression: 'SET #status = :completed, answer = :answer REMOVE locked_until',
        ConditionExpression: 'fingerprint = :fingerprint AND #status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':completed': 'completed',
          ':inProgress': 'in_progress',
          ':answer': JSON.stringify(answer),
          ':fingerprint': request.fingerprint,
        },
      }),
    );
  } catch (error) {
    logger.warn('idempotency answer not recorded', { error });
  }
}

/**
 * Frees the key after the request failed (its error answer is not kept), so that a retry with the
 * same key does the work again, as a retry of a failed request without a key would.
 */
export async function releaseIdempotencyKey(request: IdempotencyRequest): Promise<void> {
  try {
    await documentClient.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: idempotencyRecordKey(request),
        ConditionExpression: 'fingerprint = :fingerprint AND #status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':fingerprint': request.fingerprint, ':inProgress': 'in_progress' },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) logger.warn('idempotency key not released', { error });
  }
}
