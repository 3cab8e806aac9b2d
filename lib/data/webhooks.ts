import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Forbidden, NotFound } from '../domain/errors';
import type { BoardScope, ScopeVia } from './access';
import { turnCommitted } from './board-turns';
import {
  documentClient,
  LostRace,
  type NamedItems,
  namesOf,
  queryAll,
  refusalOf,
  retryingConflicts,
  tableName,
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

/**
 * A board's webhooks (docs/reference.md, "Webhooks"; docs/webhooks.md). Each is an
 * item of the board's partition (`WEBHOOK#<id>`, after every tree range) with a lookup
 * (`WEBHOOK#<id> / #LOOKUP` -> board id) for the `/webhooks/{id}` routes; the board item's
 * `webhook_count` caps them at 10, kept in the same transaction as every create and delete, with
 * the ids and the counter that say who speaks for which (lib/data/webhook-creators.ts). Secrets
 * are stored only as KMS ciphertexts (lib/data/webhook-secrets.ts) and shown only in the answers of
 * create and rotate, which live apart (lib/data/webhook-secret-writes.ts) so that the other routes'
 * bundles carry no KMS client. No webhook change is a board event: the log, sockets and webhooks see none.
 */

/** The most webhooks one board has (webhooks.md: an eleventh is 409 naming the limit). */
export const MAX_WEBHOOKS_PER_BOARD = 10;

/** A webhook as the API shows it: never a secret, never the worker's failure fields. */
export type Webhook = Pick<
  StoredWebhook,
  'id' | 'board_id' | 'url' | 'events' | 'description' | 'active' | 'disabled_reason' | 'created_by' | 'created_at'
>;
export type WebhookWithSecret = Webhook & { secret: string };

export const toWebhook = (record: WebhookRecord | StoredWebhook): Webhook => {
  const r = record as StoredWebhook;
  return {
    id: r.id,
    board_id: r.board_id,
    url: r.url,
    events: [...(r.events ?? [])],
    description: r.description ?? null,
    active: r.active,
    disabled_reason: r.disabled_reason ?? null,
    created_by: r.created_by,
    created_at: r.created_at,
  };
};

/** Creation order: `created_at`, then id (ids are random; at most 10 items, so sorted here). */
const byCreation = (a: WebhookRecord, b: WebhookRecord) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * Every webhook item of a board, oldest first: one strongly consistent Query of the board's
 * `WEBHOOK#` range. The webhook fanout reads it for every event (a webhook made or switched off an
 * instant before is seen), so it returns the records, secrets' ciphertexts included.
 */
export async function boardWebhooks(boardId: string): Promise<WebhookRecord[]> {
  const items = (await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':prefix': keys.webhookPrefix },
  })) as unknown as WebhookRecord[];
  return items.sort(byCreation);
}

/** GET /boards/{id}/webhooks: the board's webhooks, oldest first, without secrets. */
export async function listWebhooks(scope: BoardScope): Promise<Webhook[]> {
  return (await boardWebhooks(scope.boardId)).filter((r) => r[TTL_ATTRIBUTE] === undefined).map(toWebhook);
}

/**
 * One UpdateItem of a webhook that still lives (the item exists and has no TTL: it is not on its
 * way out with its board), sent again on transaction conflicts; the webhook as it now is. A
 * condition failure reaches the caller, who says what it means (`extra` adds the caller's own
 * condition; the item as it was comes with the failure, for the callers that ask for it).
 */
export async function updateLiveWebhook(
  webhook: Pick<WebhookRecord, 'id' | 'board_id'>,
  update: {
    UpdateExpression: string;
    extraCondition?: string;
    names?: Record<string, string>;
    values: Record<string, unknown>;
  },
): Promise<WebhookRecord> {
  const out = await retryingConflicts(() =>
    documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhook(webhook.board_id, webhook.id),
        UpdateExpression: update.UpdateExpression,
        ConditionExpression: `attribute_exists(pk) AND attribute_not_exists(#ttl)${update.extraCondition ? ` AND ${update.extraCondition}` : ''}`,
        ExpressionAttributeNames: { ...update.names, '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: update.values,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    ),
  );
  return out.Attributes as WebhookRecord;
}

export interface WebhookChanges {
  url?: string | null;
  events?: string[] | null;
  description?: string | null;
  active?: boolean | null;
}

/**
 * PATCH /webhooks/{id}: null or omitted leaves a field as it is. `active: true` also clears what
 * switched it off (`disabled_reason`, and the worker's `failing_since` and `failed_in_row`), so it
 * starts afresh, and makes the caller the owner it speaks for (`created_by`); a webhook that was
 * off gets `from_seq`, the board's `seq` as the write commits, so that it receives only events
 * committed after it was switched on. `active: false` keeps the reason (null unless the service
 * switched it off).
 *
 * One transaction: the webhook, on condition that it still lives and is on or off as read (a
 * switch-off meanwhile, by the worker or by its creator leaving the owners, makes this look again
 * rather than switch it back on unnoticed); the caller still an owner (a removal that committed
 * first makes this 403, so a removed owner's last request cannot leave a webhook speaking for
 * them); and, with `active: true`, the board item: its `webhooks_version` advances (a membership
 * change that read the older one looks again) and, for a webhook that was off, its `seq` is still
 * the one read, which makes `from_seq` exact. That last write takes its turn on a busy board like a
 * change of the log (`inBoardTurn`): the queue empty or this writer at its head, and the hand-over
 * in the same update; the other PATCHes do not require the `seq` and wait for nobody. A delete that
 * won the race makes it 404.
 */
export async function updateWebhook(scope: ScopeVia<'webhook'>, changes: WebhookChanges): Promise<Webhook> {
  let webhook = scope.webhook as StoredWebhook;
  const caller = scope.member.user_id;
  const fields: Partial<StoredWebhook> = {};
  if (changes.url != null) fields.url = changes.url;
  if (changes.events != null) fields.events = changes.events;
  if (changes.description != null) fields.description = changes.description;
  if (changes.active != null) fields.active = changes.active;
  if (Object.keys(fields).length === 0) return toWebhook(webhook);
  const switchingOn = changes.active === true;
  return inBoardTurn(scope.board, switchingOn && !webhook.active, async (board: BoardRecord) => {
    const set: Record<string, unknown> = { ...fields };
    const remove: string[] = [];
    if (switchingOn) {
      set.disabled_reason = null;
      set.created_by = caller;
      remove.push('failing_since', 'failed_in_row');
      if (!webhook.active) set.from_seq = boardSeqOf(board);
    }
    const names: Record<string, string> = { '#ttl': TTL_ATTRIBUTE, '#active': 'active' };
    const values: Record<string, unknown> = { ':wasActive': webhook.active };
    for (const [field, value] of Object.entries(set)) {
      names[`#${field}`] = field;
      values[`:${field}`] = value;
    }
    const seq = switchingOn && !webhook.active ? seqUnchangedInTurn(board) : undefined;
    const items = {
      webhook: {
        Update: {
          Key: keys.webhook(webhook.board_id, webhook.id),
          UpdateExpression: `SET ${Object.keys(set)
            .map((field) => `#${field} = :${field}`)
            .join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#ttl) AND #active = :wasActive',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      callerOwner: callerStillOwner(webhook.board_id, caller),
      // Switching on: who speaks for the webhook changes (and, for one that was off, from_seq).
      board: switchingOn
        ? {
            Update: {
              Key: keys.board(webhook.board_id),
              UpdateExpression: `${seq && seq.set.length > 0 ? `SET ${seq.set.join(', ')} ` : ''}ADD ${VERSION_STEP.clause}`,
              ConditionExpression: `attribute_exists(pk)${seq ? ` AND ${seq.condition}` : ''}`,
              ExpressionAttributeValues: { ...VERSION_STEP.values, ...seq?.values },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          }
        : undefined,
    } satisfies NamedItems;
    try {
      await transactNamed(items);
      // The turn, if this writer held one, went on in the same transaction; a write without the
      // `seq` clauses carried no hand-over, and withTurn hands a turn still held on.
      if (seq) turnCommitted();
    } catch (error) {
      const refusal = refusalOf(error, namesOf(items));
      if (!refusal || refusal.failed.size === 0) throw error;
      if (refusal.failed.has('callerOwner')) throw new Forbidden('Only an owner of this board may do this.');
      if (refusal.failed.has('webhook')) {
        const current = refusal.itemAt<StoredWebhook>('webhook');
        if (!current || current[TTL_ATTRIBUTE] !== undefined) throw new NotFound('Webhook');
        webhook = current;
      }
      if (refusal.failed.has('board')) {
        const current = refusal.itemAt<BoardRecord>('board');
        if (!current) throw new NotFound('Webhook');
        throw new BoardRaceLost(current);
      }
      throw new LostRace();
    }
    return toWebhook({ ...webhook, ...set } as StoredWebhook);
  });
}

/**
 * DELETE /webhooks/{id}: one transaction deletes the webhook and its lookup and takes 1 off the
 * board's count. Its deliveries stay until their TTL (7 days); the worker drops pending ones whose
 * webhook is gone. A second delete, or a board deleted meanwhile, is 404 and changes nothing.
 */
export async function deleteWebhook(scope: ScopeVia<'webhook'>): Promise<void> {
  const { webhook } = scope;
  const items = {
    webhook: {
      Delete: {
        Key: keys.webhook(webhook.board_id, webhook.id),
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#ttl)',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      },
    },
    lookup: { Delete: { Key: keys.webhookLookup(webhook.id) } },
    board: {
      Update: {
        Key: keys.board(webhook.board_id),
        // The id leaves the board's list, and the counter of who speaks for which advances.
        UpdateExpression: `ADD webhook_count :minus, ${VERSION_STEP.clause} DELETE webhook_ids :id`,
        // The board must exist: ADD on a missing item would create a stub board.
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':minus': -1, ':id': new Set([webhook.id]), ...VERSION_STEP.values },
      },
    },
  } satisfies NamedItems;
  try {
    await transactNamed(items);
  } catch (error) {
    const refusal = refusalOf(error, namesOf(items));
    if (refusal?.failed.has('webhook') || refusal?.failed.has('board')) throw new NotFound('Webhook');
    throw error;
  }
}

/**
 * A new `webhook.ping` event for one webhook (webhooks.md): its own id, no `seq`, delivered whatever
 * the webhook's `events` and `active` say.
 */
export const pingEvent = (webhook: Pick<WebhookRecord, 'id' | 'board_id'>) => ({
  type: 'webhook.ping',
  event_id: randomUUID(),
  board_id: webhook.board_id,
  webhook_id: webhook.id,
  occurred_at: now(),
});
