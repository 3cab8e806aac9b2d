import { randomUUID } from 'node:crypto';
import { Forbidden, LimitReached, NotFound } from '../domain/errors';
import { newSecret } from '../webhooks/signature';
import type { BoardScope, ScopeVia } from './access';
import { turnCommitted } from './board-turns';
import {
  isConditionFailure,
  itemAtConditionFailure,
  LostRace,
  type NamedItems,
  namesOf,
  refusalOf,
  retryLostRaces,
  transactNamed,
} from './db';
import { type BoardRecord, now, type WebhookRecord } from './records';
import { keys, TTL_ATTRIBUTE } from './table';
import {
  BoardRaceLost,
  boardSeqOf,
  callerStillOwner,
  inBoardTurn,
  type StoredWebhook,
  seqUnchangedInTurn,
  VERSION_STEP,
} from './webhook-creators';
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
 * id), then one transaction puts the webhook and its lookup, and adds 1 to the board's count, the
 * id to its `webhook_ids` and 1 to its `webhooks_version` (lib/data/webhook-creators.ts), on
 * condition that the board exists, has fewer than 10 and its `seq` is still the one read (so that
 * `from_seq`, the first event the webhook does not receive, is exact), and that the caller is still
 * an owner. On a busy board the write takes its turn like a change of the log (`inBoardTurn`): the
 * board's condition also requires the queue empty, or this writer's ticket at its head, and then
 * hands the turn over. A cancelled board condition is 404 when the board item is gone (deleted
 * meanwhile), the limit (409) at 10, else a change of the board meanwhile or writers queued: the
 * write waits its turn and is tried again on the board as it then is. Concurrent creates are
 * serialised by DynamoDB on the board item, so exactly 10 of any burst succeed.
 */
export async function createWebhook(
  scope: BoardScope,
  input: { url: string; events?: string[] | null; description?: string | null },
): Promise<WebhookWithSecret> {
  const { boardId } = scope;
  const id = randomUUID();
  const secret = newSecret();
  const record: StoredWebhook = {
    id,
    board_id: boardId,
    url: input.url,
    events: input.events ?? [],
    description: input.description ?? null,
    active: true,
    disabled_reason: null,
    created_by: scope.member.user_id,
    from_seq: boardSeqOf(scope.board),
    created_at: now(),
    secret_enc: await sealSecret(secret, { webhookId: id, boardId }),
  };
  await inBoardTurn(scope.board, true, async (board: BoardRecord) => {
    record.from_seq = boardSeqOf(board);
    const seq = seqUnchangedInTurn(board);
    const writes = {
      webhook: {
        Put: {
          Item: { ...keys.webhook(boardId, id), type: 'webhook', ...record },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      lookup: {
        Put: {
          Item: { ...keys.webhookLookup(id), type: 'webhook_lookup', board_id: boardId },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      board: {
        Update: {
          Key: keys.board(boardId),
          UpdateExpression: `${seq.set.length > 0 ? `SET ${seq.set.join(', ')} ` : ''}ADD webhook_count :one, webhook_ids :id, ${VERSION_STEP.clause}`,
          ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(webhook_count) OR webhook_count < :max) AND ${seq.condition}`,
          ExpressionAttributeValues: {
            ':one': 1,
            ':max': MAX_WEBHOOKS_PER_BOARD,
            ':id': new Set([id]),
            ...VERSION_STEP.values,
            ...seq.values,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      callerOwner: callerStillOwner(boardId, scope.member.user_id),
    } satisfies NamedItems;
    try {
      await transactNamed(writes);
      // The turn, if this writer held one, went on in the same transaction.
      turnCommitted();
    } catch (error) {
      const refusal = refusalOf(error, namesOf(writes));
      if (refusal?.failed.has('callerOwner')) throw new Forbidden('Only an owner of this board may do this.');
      if (refusal?.failed.has('board')) {
        const current = refusal.itemAt<BoardRecord>('board');
        if (!current) throw new NotFound('Board');
        if ((current.webhook_count ?? 0) >= MAX_WEBHOOKS_PER_BOARD) throw limitReached();
        throw new BoardRaceLost(current);
      }
      throw error;
    }
  });
  return { ...toWebhook(record), secret };
}

/**
 * POST /webhooks/{id}/rotate-secret: a new secret, sealed; the current ciphertext becomes the
 * previous one (it keeps signing for 24 hours from `rotated_at`), and a previous one still in its
 * 24 hours is dropped (lib/webhooks/signature.ts rotateSecret: at most two ever sign). The write
 * requires the ciphertext it replaces, so of two racing rotations the second starts again on the
 * first's result: both answers' secrets keep signing, none is lost. Nothing is decrypted.
 */
export async function rotateWebhookSecret(scope: ScopeVia<'webhook'>): Promise<WebhookWithSecret> {
  let { webhook } = scope;
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
