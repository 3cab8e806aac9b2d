import { queueEmpty, turnClauses, turnHeld, waitOrGone, withTurn } from './board-turns';
import { type ItemSet, LostRace, type NamedItems, StorageBusy, type TransactItem } from './db';
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
function seqUnchanged(seen: number): { condition: string; values: Record<string, unknown> } {
  return seen === 0
    ? { condition: 'attribute_not_exists(seq)', values: {} }
    : { condition: 'seq = :seenSeq', values: { ':seenSeq': seen } };
}

/*
 * Creating a webhook and switching one on that was off are no changes of the log, but they require
 * the board's `seq` unchanged since the read (that makes `from_seq` exact), so on a busy board they
 * meet what every change meets: racing blindly, they would lose to the writers committing one
 * after another. So they take turns as a change does (lib/data/board-turns.ts; docs/data-model.md,
 * "Busy boards"): the first attempt as before, with the clause "the queue is empty", so that they
 * never overtake writers waiting their turn (their transaction in flight would also hold up the
 * one at the head); after a lost race they queue, and when the turn comes they write with
 * `turn_head = :ticket` and hand the turn over in the same update.
 * The webhook writes that do not require the `seq` (a delete, a PATCH that switches nothing on,
 * switching on a webhook already on) neither take turns nor wait for the queue: they leave `seq`
 * alone, so whichever side of a change they commit on, the log's numbering and every webhook's
 * `from_seq` stay right (a transaction of a change that meets one in flight is sent again by
 * transactWrite).
 */

/**
 * The board item's clauses for a webhook write that requires the board's `seq` unchanged since
 * `seen` was read: that condition and the writer's turn, with the hand-over to set when it holds one
 * (`turnClauses`). A write that commits with them must call `turnCommitted()`.
 */
export function seqUnchangedInTurn(seen: BoardRecord): { condition: string; set: string[]; values: Record<string, unknown> } {
  const seq = seqUnchanged(boardSeqOf(seen));
  const turn = turnClauses(turnHeld(), seen);
  return {
    condition: `${seq.condition} AND (${turn.condition})`,
    set: turn.set ?? [],
    values: { ...seq.values, ...turn.values },
  };
}

/**
 * Thrown by an attempt whose board condition from `seqUnchangedInTurn` failed with the board still
 * there and nothing to refuse: a change committed first, writers queue, or the turn passed this
 * writer by. It carries the board as it now is (the cancellation returned it).
 */
export class BoardRaceLost extends LostRace {
  constructor(readonly board: BoardRecord) {
    super();
  }
}

/** Attempts at most: after a lost race the next attempt holds the turn, so more than a few are rare. */
const MAX_ATTEMPTS = 40;

/**
 * Runs a webhook write's attempts, taking turns on a busy board. `attempt` gets the board to build
 * its conditions on: the board as the request read it, then as its turn came. BoardRaceLost queues
 * the writer (or, skipped while slow, queues it again); any other LostRace (only the write's own
 * item changed, with its new state kept by the attempt) runs it again at once, on the same board
 * and the same turn. `queueFirst`: the first attempt requires the board's `seq`, and writers
 * already queue on the board as read, so it would fail: the writer queues at once. A turn still
 * held when the write ends without committing it (a refusal: 403, 404, 409; an error) is handed on
 * by withTurn.
 */
export function inBoardTurn<T>(first: BoardRecord, queueFirst: boolean, attempt: (board: BoardRecord) => Promise<T>): Promise<T> {
  return withTurn({ boardId: first.id }, async (untilTurn) => {
    let board = queueFirst && !queueEmpty(first) ? await waitOrGone(untilTurn, first) : first;
    for (let n = 1; ; n++) {
      try {
        return await attempt(board);
      } catch (error) {
        if (!(error instanceof LostRace)) throw error;
        if (n >= MAX_ATTEMPTS) throw new StorageBusy('a webhook write kept losing races on its board');
        if (error instanceof BoardRaceLost) board = await waitOrGone(untilTurn, error.board);
      }
    }
  });
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
