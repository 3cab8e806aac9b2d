import { randomUUID } from 'node:crypto';
import { LimitReached, NotFound } from '../domain/errors';
import { newSecret } from '../webhooks/signature';
import type { BoardScope } from './access';
import { isConditionFailure, itemAtCancellation, itemAtConditionFailure, LostRace, retryLostRaces, transactWrite } from './db';
import { now, type WebhookRecord } from './records';
import { cancellationCodes } from './sdk-errors';
import { keys, TTL_ATTRIBUTE } from './table';
import { sealSecret } from './webhook-secrets';
import { MAX_WEBHOOKS_PER_BOARD, toWebhook, updateLiveWebhook, type WebhookWithSecret } from './webhooks';

/**
 * The two webhook writes that seal a new secret with KMS (create and rotate-secret), apart from
 * lib/data/webhooks.ts so that only these two routes' bundles carry the KMS client: list, get,
 * update, delete, deliveries and ping import the rest and stay at the DynamoDB floor (bench/bundles.ts
 * holds each function to the SDK clients found in its own bundle).
 */

const limitReached = () => new LimitReached(`A board can have at most ${MAX_WEBHOOKS_PER_BOARD} webhooks; delete one first.`);

/**
 * Creates a webhook with a new secret: the secret is sealed first (one KMS Encrypt, bound to the new
 * id), then one transaction puts the webhook and its lookup and adds 1 to the board's count, on
 * condition that the board exists and has fewer than 10: a cancelled board condition is 404 when
 * the board item is gone (deleted meanwhile), else the limit (409). Concurrent creates are serialised
 * by DynamoDB on the board item, so exactly 10 of any burst succeed.
 */
export async function createWebhook(
  scope: BoardScope,
  input: { url: string; events?: string[] | null; description?: string | null },
): Promise<WebhookWithSecret> {
  const { boardId } = scope;
  const id = randomUUID();
  const secret = newSecret();
  const record: WebhookRecord = {
    id,
    board_id: boardId,
    url: input.url,
    events: input.events ?? [],
    description: input.description ?? null,
    active: true,
    disabled_reason: null,
    created_at: now(),
    secret_enc: await sealSecret(secret, { webhookId: id, boardId }),
  };
  try {
    await transactWrite([
      {
        Put: {
          Item: { ...keys.webhook(boardId, id), type: 'webhook', ...record },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          Item: { ...keys.webhookLookup(id), type: 'webhook_lookup', board_id: boardId },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          Key: keys.board(boardId),
          UpdateExpression: 'ADD webhook_count :one',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(webhook_count) OR webhook_count < :max)',
          ExpressionAttributeValues: { ':one': 1, ':max': MAX_WEBHOOKS_PER_BOARD },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ]);
  } catch (error) {
    if (cancellationCodes(error)?.[2] === 'ConditionalCheckFailed') {
      throw itemAtCancellation(error, 2) ? limitReached() : new NotFound('Board');
    }
    throw error;
  }
  return { ...toWebhook(record), secret };
}

/**
 * POST /webhooks/{id}/rotate-secret: a new secret, sealed; the current ciphertext becomes the
 * previous one (it keeps signing for 24 hours from `rotated_at`), and a previous one still in its
 * 24 hours is dropped (lib/webhooks/signature.ts rotateSecret: at most two ever sign). The write
 * requires the ciphertext it replaces, so of two racing rotations the second starts again on the
 * first's result: both answers' secrets keep signing, none is lost. Nothing is decrypted.
 */
export async function rotateWebhookSecret(scope: BoardScope): Promise<WebhookWithSecret> {
  let webhook = scope.webhook!;
  const ids = { webhookId: webhook.id, boardId: webhook.board_id };
  const secret = newSecret();
  const sealed = await sealSecret(secret, ids);
  return retryLostRaces(async () => {
    // rotateSecret's state change, on ciphertexts: the current secret becomes the previous one.
    const rotatedAt = new Date().toISOString();
    try {
      const rotated = await updateLiveWebhook(webhook, {
        UpdateExpression: 'SET secret_enc = :new, previous_secret_enc = :old, rotated_at = :at',
        extraCondition: 'secret_enc = :old',
        values: { ':new': sealed, ':old': webhook.secret_enc, ':at': rotatedAt },
      });
      return { ...toWebhook(rotated), secret };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = itemAtConditionFailure<WebhookRecord>(error);
      if (!current || current[TTL_ATTRIBUTE] !== undefined) throw new NotFound('Webhook');
      webhook = current;
      throw new LostRace();
    }
  });
}
