import type { ItemSet, NamedItems, TransactItem } from './db';
import type { BoardItemChange } from './event-log';
import type { BoardRecord, WebhookRecord } from './records';
import { keys, TTL_ATTRIBUTE } from './table';

/**
 * Who a webhook speaks for (docs/webhooks.md "Who a webhook speaks for"). Every webhook names an
 * owner in `created_by`: the one who made it, or who last switched it on. When that user stops
 * being an owner of the board, the webhook is switched off (`creator_not_owner`) in the very
 * transaction that changes the membership, so that no event numbered after that change finds it on.
 *
 * To know, inside that transaction, which webhooks the leaving owner speaks for, the board item
 * keeps the ids of its webhooks (`webhook_ids`, a string set) and a counter that every change of
 * who speaks for which webhook advances (`webhooks_version`: a create, a delete, a PATCH that
 * switches a webhook on). The membership change reads the board (as it already does), reads those
 * webhooks in the round trip that reads the member, switches off the leaver's, and commits only if
 * `webhooks_version` is still the one it read: a webhook made or switched on by the leaver in
 * between makes it read again, never leaves that webhook on. Creates and switch-ons, for their
 * part, commit only while their caller is still an owner (a condition on the member item).
 *
 * This module is imported by the membership code (lib/data/members.ts): it holds no KMS or SQS client.
 */

/** Why the service switched a webhook off: its deliveries kept failing, or its creator left the owners. */
type DisabledReason = 'failing' | 'creator_not_owner';
const CREATOR_NOT_OWNER: DisabledReason = 'creator_not_owner';

/**
 * A webhook item as stored. `created_by` and `from_seq` are written by every create and every
 * switch-on; `from_seq` is the board's `seq` when that write committed: only events numbered above
 * it are the webhook's.
 */
export type StoredWebhook = Omit<WebhookRecord, 'disabled_reason'> & {
  disabled_reason: DisabledReason | null;
  created_by: string;
  from_seq?: number;
};

/** The board item's webhook fields kept here (beside `webhook_count`, which caps them). */
export type BoardWithWebhooks = BoardRecord & { webhook_ids?: Set<string>; webhooks_version?: number };

const webhookIdsOf = (board: BoardRecord) => [...((board as BoardWithWebhooks).webhook_ids ?? [])].sort();
export const webhooksVersionOf = (board: BoardRecord) => (board as BoardWithWebhooks).webhooks_version ?? 0;

/** The board's latest `seq` as read (absent before its first change). */
export const boardSeqOf = (board: Pick<BoardRecord, 'seq'>) => board.seq ?? 0;

/** A condition that the board's `seq` is still `seen` (absent when 0), and its value. */
export function seqUnchanged(seen: number): { condition: string; values: Record<string, unknown> } {
  return seen === 0
    ? { condition: 'attribute_not_exists(seq)', values: {} }
    : { condition: 'seq = :seenSeq', values: { ':seenSeq': seen } };
}

/** The board item clauses of a change of who speaks for a webhook: the counter advances. */
export const VERSION_STEP = { clause: 'webhooks_version :versionStep', values: { ':versionStep': 1 } } as const;

/** The caller is still an owner of the board when the write commits. */
export const callerStillOwner = (boardId: string, userId: string): TransactItem => ({
  ConditionCheck: {
    Key: keys.member(boardId, userId),
    ConditionExpression: '#role = :owner',
    ExpressionAttributeNames: { '#role': 'role' },
    ExpressionAttributeValues: { ':owner': 'owner' },
  },
});

/**
 * The webhook items a membership change reads beside the member, when the member might be an
 * owner leaving the owners: every webhook of the board (at most 10), none on a board without any.
 */
export const webhookKeysOf = (board: BoardRecord) => webhookIdsOf(board).map((id) => keys.webhook(board.id, id));

/** The name of a webhook's switch-off in a membership change's transaction. */
export type SwitchOff = `switchOff:${string}`;
export const isSwitchOff = (name: string): name is SwitchOff => name.startsWith('switchOff:');

/** What a membership change that takes `userId` off the owners adds to its transaction. */
export interface CreatorLeaving {
  /** One switch-off per webhook `userId` speaks for, each on condition that it still does. */
  writes: NamedItems<SwitchOff>;
  /** The board item's condition: who speaks for which webhook has not changed since the read. */
  board: BoardItemChange;
  /** The counter as read: a refused board condition with another one is a lost race. */
  version: number;
}

/**
 * The switch-offs for an owner who stops being one, from the board as read and its webhooks as
 * read (`found`, from `webhookKeysOf`). A webhook already off is marked too, so that its owners see
 * why it speaks for nobody; switching it on again (PATCH) makes the switcher its creator.
 */
export function creatorLeaves(board: BoardRecord, userId: string, found: ItemSet): CreatorLeaving {
  const version = webhooksVersionOf(board);
  const writes: NamedItems<SwitchOff> = Object.fromEntries(
    webhookIdsOf(board)
      .filter((id) => found.get<StoredWebhook>(keys.webhook(board.id, id))?.created_by === userId)
      .map((id): [SwitchOff, TransactItem] => [
        `switchOff:${id}`,
        {
          Update: {
            Key: keys.webhook(board.id, id),
            UpdateExpression: 'SET active = :off, disabled_reason = :reason',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#ttl) AND created_by = :creator',
            ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
            ExpressionAttributeValues: { ':off': false, ':reason': CREATOR_NOT_OWNER, ':creator': userId },
          },
        },
      ]),
  );
  return {
    writes,
    board:
      version === 0
        ? { condition: 'attribute_not_exists(webhooks_version)' }
        : { condition: 'webhooks_version = :webhooksVersion', values: { ':webhooksVersion': version } },
    version,
  };
}
