import { randomUUID } from 'node:crypto';
import { NotFound, ResyncRequired } from '../domain/errors';
import type { BoardEvent, BoardEventKind } from '../domain/events';
import { MAX_SEQ } from '../domain/limits';
import { ENV, secondsFromEnv } from '../runtime/config';
import {
  type CallsAfterTurn,
  headOf,
  queueEmpty,
  type TurnPost,
  turnClauses,
  turnCommitted,
  turnHeld,
  waitOrGone,
  withTurn,
} from './board-turns';
import { eventsOfLogItem } from './change-events';
import { cardWithCommentsDeletionRecordFilter, deletionRecordFilter } from './changes';
import {
  type Item,
  itemsOf,
  LostRace,
  type NamedItems,
  namesOf,
  queryPages,
  type Refusal,
  refusalOf,
  StorageBusy,
  type TransactItem,
  transactWrite,
} from './db';
import { type FoldedCount, transactWriteCounted } from './rate-limits';
import { type BoardRecord, now } from './records';
import { keys, logSortKey, TTL_ATTRIBUTE } from './table';

/**
 * The board's event log (docs/reference.md, "Sequence numbers and catching up";
 * docs/realtime.md says why it is built this way and what it costs).
 *
 * Every change of a board is one transaction that also advances the board item's `seq` from the
 * value the request read (condition `seq = :seen`) and puts the change's log item under the new
 * number (a batch: its events under consecutive numbers, in runs: `LogRunItem`). So:
 * - no repeat: two transactions that read the same `seq` cannot both commit (the second fails
 *   its condition, or conflicts and is retried by DynamoDB's caller, then fails it);
 * - no gap: a number is taken only by a transaction that commits, with the change itself; a
 *   cancelled one (a failed request, a lost race) leaves the counter where it was, and its retry
 *   reads the counter again;
 * - real-time order: a change's number is fixed when it commits, and any change committed later
 *   read a counter at least that high;
 * - read-your-writes: the log item commits with the change, so once the answer is out, a
 *   strongly consistent Query lists it.
 * Since nothing on the board can change between the read of `seq` and the commit, what the
 * request read (the card, the board's labels) is exactly what the board holds when the change
 * lands: the event is built from it, stored in the log item as watchers receive it, and the
 * stream record of that item alone is what the broadcaster sends (a run's: each of its events).
 */

/** The board item's change counter: the `seq` of its latest change (absent on a board with none yet). */
const SEQ_ATTRIBUTE = 'seq';

/** The default time a board's events are kept: 7 days (EVENT_RETENTION_SECONDS overrides it). */
const DEFAULT_EVENT_RETENTION_SECONDS = 7 * 24 * 60 * 60;

/** How long events are kept, read at cold start like every setting. */
const eventRetentionSeconds = () => secondsFromEnv(ENV.eventRetentionSeconds, DEFAULT_EVENT_RETENTION_SECONDS);

/** A board's latest `seq`, from its item as read. */
export const seqOf = (board: Pick<BoardRecord, 'seq'> | undefined) => board?.seq ?? 0;

/** What a log item holds besides its key: one change's event, under its `seq`. */
interface LogItem {
  type: 'event';
  board_id: string;
  seq: number;
  /** The kind again, outside the event: the stream filters of the consumers read it. */
  kind: BoardEventKind;
  /** The event exactly as watchers receive it and the events route lists it. */
  event: BoardEvent;
  /** Epoch seconds until which the event is kept: the 410 rule reads this, never the TTL. */
  kept_until: number;
}

/**
 * A run of a batch's consecutive changes in one log item, under the `seq` of its last one: the
 * events in order, `first_seq` to `seq`. Every item of a DynamoDB transaction is paid for, and a
 * log item apiece was a third of a batch's writes (25 creates: 77 items; as runs, 53), so a batch's
 * events share items. Keyed by the last `seq`, a run is found by the same range read as a single
 * event (`readLog`: every item whose key is past `after` holds what follows it). No kind beside the
 * events: a change a stream filter picks by its kind (a deletion the collector finishes) is never
 * in a run (`standsAlone`).
 */
interface LogRunItem {
  type: 'event';
  board_id: string;
  seq: number;
  first_seq: number;
  events: BoardEvent[];
  kept_until: number;
}

/** A log item as stored: one change's, or a run of a batch's. */
export type StoredLogItem = LogItem | LogRunItem;

/** A change's event, exactly as watchers receive it and the log keeps it. */
const newEvent = (
  change: Pick<Change<string>, 'boardId' | 'actor'>,
  occurredAt: string,
  seq: number,
  kind: BoardEventKind,
  fields?: Record<string, unknown>,
  actor = change.actor,
): BoardEvent & { seq: number } => ({
  type: kind,
  event_id: randomUUID(),
  board_id: change.boardId,
  actor_id: actor,
  occurred_at: occurredAt,
  seq,
  ...fields,
});

/** Epoch seconds until which an event written at `occurredAt` is kept. */
const keptUntilOf = (occurredAt: string) => Math.floor(Date.parse(occurredAt) / 1000) + eventRetentionSeconds();

/**
 * The log item of consecutive events of one board: one change's (`kind` is its kind) under its
 * `seq`, or a batch's run under its last one's.
 */
function logItemOf(
  boardId: string,
  kind: BoardEventKind,
  events: (BoardEvent & { seq: number })[],
  keptUntil: number,
): StoredLogItem {
  const [first, last] = [events[0]!, events.at(-1)!];
  const common = { type: 'event', board_id: boardId, seq: last.seq, kept_until: keptUntil } as const;
  return events.length === 1 ? { ...common, kind, event: first } : { ...common, first_seq: first.seq, events };
}

/**
 * The board item's part in a change beyond the counter: its own clauses and condition (a
 * label's name in `labels`, `owner_count`, `deleting_columns`), merged into the one update, since
 * a transaction may touch an item once.
 */
export interface BoardItemChange {
  set?: string[];
  add?: string[];
  remove?: string[];
  delete?: string[];
  condition?: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/** The names commitChange gives its own items, after the change's writes: no write takes them. */
const BOARD_ITEM = '$board';
const LOG_ITEM = '$log';
type OwnItem = typeof BOARD_ITEM | typeof LOG_ITEM;
const isOwnItem = (name: string): name is OwnItem => name === BOARD_ITEM || name === LOG_ITEM;
/** The names of a change's transaction in the order sent: its writes, then the board and log items. */
const sentNames = <N extends string>(writes: NamedItems<N>): (N | OwnItem)[] => [...namesOf(writes), BOARD_ITEM, LOG_ITEM];

export interface Change<N extends string> {
  boardId: string;
  /** The board item as the attempt read it (the first attempt) or as the last lost race returned it. */
  seen: BoardRecord;
  kind: BoardEventKind;
  actor: string;
  /** The kind's own fields of the event (`card`, `from_column_id`, ...). */
  fields?: Record<string, unknown>;
  /**
   * Attributes of the log item beside the event, for the stream filters of its readers (a
   * deleted card's `comment_count`: the collector is invoked only for a card with comments).
   */
  logAttributes?: Record<string, string | number>;
  /** The change's own writes by name, sent first: a cancellation is read by these names (`changeRefusal`). */
  writes: NamedItems<N> & { readonly [K in OwnItem]?: never };
  board?: BoardItemChange;
  /** `board.deleted`: the board item is deleted rather than updated (the counter goes with it). */
  deletesBoard?: boolean;
  /** The board is gone: default 404 Board. */
  gone?: () => Error;
  /** The change's own board condition failed on the board as it now is (its seq unchanged). */
  boardRefused?: (board: BoardRecord) => Error;
}

/**
 * An attempt of a change lost a race: the board's `seq` moved on, or one of the change's own items
 * changed. It carries what the failed conditions returned, for the next attempt (`retryChange`):
 * the board as it now is, and the change's own item as it now is when that is what changed.
 * `busy`: what changed says other writers are at work on the board though the board as read had
 * not moved yet (another create or restore took the column's version): the next attempt waits its
 * turn.
 */
export class ChangeRaceLost<I = undefined> extends LostRace {
  constructor(
    readonly board: BoardRecord,
    readonly item?: I,
    readonly busy = false,
  ) {
    super();
  }
}

/** What an attempt of a change starts from: the board, and the change's own item (a card, a label...). */
export interface Seen<I> {
  board: BoardRecord;
  item: I;
}

/** Attempts of one change at most (a lost race while holding the turn is rare: an item changed by a write outside the log). */
const MAX_ATTEMPTS = 40;

/**
 * Runs `attempt` until it does not lose a race, each attempt on what the last one's failed
 * conditions returned (ChangeRaceLost), with no read: the first on `first`. The first attempt
 * races as it always did; a writer that loses queues for its turn on the board
 * (lib/data/board-turns.ts) and attempts again when its turn comes, on the board as it then is,
 * instead of racing blindly again: on a busy board a write waits its turn rather than failing.
 * `first.callsAfterTurn`: what the attempt spends once the turn comes, when not a read and a write;
 * `first.post`: the change as a queued writer posts it for the head to commit with its own.
 */
export function retryChange<I, T>(
  first: Seen<I> & { callsAfterTurn?: CallsAfterTurn; post?: TurnPost<T> },
  attempt: (seen: Seen<I>) => Promise<T>,
): Promise<T> {
  return withTurn({ boardId: first.board.id, callsAfterTurn: first.callsAfterTurn, post: first.post }, async (untilTurn) => {
    // Writers already queue on the board (as the request read it): its turn first, rather than a
    // transaction that would fail for the queue and, in flight, hold up the one at its head.
    let seen = queueEmpty(first.board) ? first : { board: await waitOrGone(untilTurn, first.board), item: first.item };
    for (let n = 1; ; n++) {
      try {
        return await attempt(seen);
      } catch (error) {
        if (!(error instanceof LostRace) || n >= MAX_ATTEMPTS) {
          throw error instanceof LostRace ? new StorageBusy('a change kept losing races on its board') : error;
        }
        const lost = error instanceof ChangeRaceLost ? (error as ChangeRaceLost<I>) : undefined;
        const board = lost?.board ?? seen.board;
        const item = lost?.item ?? seen.item;
        // Only the change's own item moved (the board as read): again at once. Another change
        // committed first, writers queue, or the loss says they are about to: this writer's turn first.
        const contended =
          lost?.busy === true || seqOf(board) !== seqOf(seen.board) || !queueEmpty(board) || turnHeld() !== undefined;
        seen = { board: contended ? await waitOrGone(untilTurn, board) : board, item };
      }
    }
  });
}

/** A cancelled change read by the names of its writes, with the board as it now is when its own condition failed too. */
export interface ChangeRefusal<N extends string> extends Refusal<N> {
  board: BoardRecord | undefined;
}

/**
 * A cancellation that commitChange handed on (one of the change's own writes failed), by the names
 * of `writes`; undefined when `error` is no cancellation.
 */
export function changeRefusal<N extends string>(error: unknown, writes: NamedItems<N>): ChangeRefusal<N> | undefined {
  const refusal = refusalOf<N | OwnItem>(error, sentNames(writes));
  if (!refusal) return undefined;
  return {
    failed: new Set([...refusal.failed].filter((name): name is N => !isOwnItem(name))),
    itemAt: (name) => refusal.itemAt(name),
    board: refusal.failed.has(BOARD_ITEM) ? refusal.itemAt<BoardRecord>(BOARD_ITEM) : undefined,
  };
}

/**
 * Commits one change of a board with its number and log item (see above). The transaction is the
 * change's `writes`, then the board item, then the log item. Cancellations:
 * - one of the change's own writes failed: the error goes to the caller, who knows what its
 *   writes mean and reads them by name (`changeRefusal`, with the board as it now is if the
 *   counter had moved too);
 * - the board is gone: `gone()`;
 * - the counter moved on: ChangeRaceLost with the board as it now is, for the caller's
 *   retryChange to run the attempt again on it;
 * - the change's own board condition failed: `boardRefused(board)`.
 */
export async function commitChange<N extends string>(change: Change<N>): Promise<void> {
  const { boardId, seen: board } = change;
  const seen = seqOf(board);
  const seq = seen + 1;
  const occurredAt = now();
  const event = newEvent(change, occurredAt, seq, change.kind, change.fields);
  const log = logItemOf(boardId, change.kind, [event], keptUntilOf(occurredAt));
  const ticket = turnHeld();
  const boardItem = boardItemWrite(change, ticket, change.deletesBoard ? 'delete' : seq);
  try {
    await transactWrite([...itemsOf(change.writes), boardItem, logPut(boardId, log, change.logAttributes)]);
    // The turn, if this writer held one, went on in the same transaction.
    turnCommitted();
  } catch (error) {
    throw boardRefusal(error, change, ticket);
  }
}

/**
 * The board item's write in a change's transaction: its counter from the `seq` as read to `nextSeq`
 * (or the item deleted, for `board.deleted`), the change's own clauses and condition, and the
 * writer's turn (lib/data/board-turns.ts: the queue empty, or its ticket at the head and the
 * hand-over in the same update).
 */
function boardItemWrite(
  change: Pick<Change<string>, 'boardId' | 'seen' | 'board'> & { combined?: number[] },
  ticket: number | undefined,
  nextSeq: number | 'delete',
): TransactItem {
  const seen = seqOf(change.seen);
  // A deleted board item holds no queue: its last change needs only the turn, not the hand-over.
  const turn = turnClauses(ticket, change.seen, nextSeq === 'delete', change.combined);
  const own = bothBoardChanges(change.board, turn) ?? {};
  const counterCondition = seen === 0 ? `attribute_not_exists(${SEQ_ATTRIBUTE})` : `${SEQ_ATTRIBUTE} = :seenSeq`;
  const condition = `attribute_exists(pk) AND ${counterCondition}${own.condition ? ` AND (${own.condition})` : ''}`;
  const values = { ...own.values, ...(seen === 0 ? {} : { ':seenSeq': seen }) };
  const names = own.names && Object.keys(own.names).length > 0 ? { ExpressionAttributeNames: own.names } : {};
  const common = { Key: keys.board(change.boardId), ConditionExpression: condition, ...names };
  return nextSeq === 'delete'
    ? {
        Delete: {
          ...common,
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      }
    : {
        Update: {
          ...common,
          UpdateExpression: updateExpression(own),
          ExpressionAttributeValues: { ...values, ':nextSeq': nextSeq },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
}

/** A log item's write: the event (or a run's events) under its `seq`, with its attributes for the stream filters and its TTL. */
const logPut = (boardId: string, log: StoredLogItem, attributes?: Record<string, string | number>): TransactItem => ({
  Put: { Item: { ...attributes, ...keys.logEntry(boardId, log.seq), ...log, [TTL_ATTRIBUTE]: log.kept_until } },
});

/**
 * What a cancelled change's transaction means (see commitChange): one of its own writes failed
 * (the error as it is, for the caller to read by name); the board gone (`gone()`); the counter
 * moved on or writers queued ahead (ChangeRaceLost); or its own board condition (`boardRefused`).
 */
function boardRefusal(
  error: unknown,
  change: Pick<Change<string>, 'seen' | 'writes' | 'gone' | 'boardRefused'>,
  ticket: number | undefined,
): unknown {
  const refusal = refusalOf<string>(error, sentNames(change.writes));
  if (!refusal) return error;
  if ([...refusal.failed].some((name) => !isOwnItem(name))) return error;
  if (!refusal.failed.has(BOARD_ITEM)) return error;
  const current = refusal.itemAt<BoardRecord>(BOARD_ITEM);
  if (!current) return (change.gone ?? (() => new NotFound('Board')))();
  // Another change first, or writers queued (and this one not at their head): its turn, then again.
  if (seqOf(current) !== seqOf(change.seen) || !turnAllows(current, ticket)) return new ChangeRaceLost(current);
  return change.boardRefused?.(current) ?? error;
}

/** One change of several committed together (`commitChanges`): its event's kind and fields, as `Change` has them. */
export interface ChangeOfMany {
  kind: BoardEventKind;
  fields?: Record<string, unknown>;
  logAttributes?: Record<string, string | number>;
  /** Whose change it is, when not the request's own (a change the head commits for a queued writer). */
  actor?: string;
}

/**
 * Several changes of one board committed as one transaction (a batch): what `Change` says, with
 * a list of changes instead of one. Their writes are merged by the caller (a transaction touches
 * an item once); `count` is the rate limiter's folded count, when the request carries one.
 */
export interface Changes<N extends string> extends Omit<Change<N>, 'kind' | 'fields' | 'logAttributes' | 'deletesBoard'> {
  changes: ChangeOfMany[];
  count?: FoldedCount;
  /** The tickets behind the writer's own whose posted changes are among `changes` (lib/data/board-turns.ts). */
  combined?: number[];
}

/** The names commitChanges gives its log items, after the board item: `$log1` for the first one. */
const logItemName = (index: number) => `${LOG_ITEM}${index + 1}`;

/**
 * The most a run's events may weigh (their JSON, in bytes): far below DynamoDB's 400 KB an item.
 * 25 card creates with short texts weigh about 15 KB; a batch of long descriptions takes several
 * runs. A run holds at most a batch's 25 events, so a stream batch of the change reader's 100
 * records carries at most 2,500; one that outlasts the reader's time is split in two and read
 * again by its event source (`bisectBatchOnError`, infra/realtime.ts).
 */
const LOG_RUN_BYTES = 64 * 1024;

/** What an event's envelope adds to its kind's fields (type, ids, time, seq), in JSON bytes at most. */
const EVENT_ENVELOPE_BYTES = 256;

/**
 * A change whose log item must be its own: one a stream filter picks by the item's `kind` or by
 * attributes beside the event (the collector's deletions: lib/data/changes.ts).
 */
const standsAlone = (change: ChangeOfMany) => change.logAttributes !== undefined || FILTERED_KINDS.has(change.kind);
const FILTERED_KINDS: ReadonlySet<string> = new Set([
  ...deletionRecordFilter.dynamodb.NewImage.kind.S,
  ...cardWithCommentsDeletionRecordFilter.dynamodb.NewImage.kind.S,
]);

/**
 * A batch's changes as log items: runs of consecutive changes (their indexes), each at most
 * LOG_RUN_BYTES, a change that stands alone in a run of its own. The batch counts its writes by it.
 */
export function logRuns(changes: ChangeOfMany[]): number[][] {
  const runs: number[][] = [];
  let bytes = 0;
  let open = false;
  changes.forEach((change, index) => {
    const size = EVENT_ENVELOPE_BYTES + Buffer.byteLength(JSON.stringify(change.fields ?? {}));
    const alone = standsAlone(change);
    if (open && !alone && bytes + size <= LOG_RUN_BYTES) {
      runs.at(-1)!.push(index);
      bytes += size;
      return;
    }
    runs.push([index]);
    bytes = size;
    open = !alone;
  });
  return runs;
}

/**
 * Commits several changes of a board at once, numbered consecutively: the board item's `seq` goes
 * from the value read (`seq = seen`, as for one change) to seen + k in the same transaction that
 * puts the k events and every write, so no other change can take a number in between and
 * either all of them land or none. Each event is exactly what `commitChange` would have made of
 * its change alone; they are stored in runs (`logRuns`, `LogRunItem`), a change that stands alone
 * in a log item like commitChange's. Cancellations are read as commitChange reads them (`changeRefusal` by the
 * names of `writes`); the counter's refusal is QuotaUsedUp (lib/data/rate-limits.ts). Returns the
 * events, in order.
 */
export async function commitChanges<N extends string>(change: Changes<N>): Promise<BoardEvent[]> {
  const { boardId, seen: board } = change;
  const seen = seqOf(board);
  const occurredAt = now();
  const keptUntil = keptUntilOf(occurredAt);
  const events = change.changes.map((one, index) =>
    newEvent(change, occurredAt, seen + index + 1, one.kind, one.fields, one.actor),
  );
  const logItems = Object.fromEntries(
    logRuns(change.changes).map((run, index) => {
      // Only a change that stands alone carries attributes beside its event.
      const first = change.changes[run[0]!]!;
      const log = logItemOf(
        boardId,
        first.kind,
        run.map((at) => events[at]!),
        keptUntil,
      );
      return [logItemName(index), logPut(boardId, log, first.logAttributes)];
    }),
  ) as NamedItems;
  // The batch takes its turn on a busy board like a single change (lib/data/board-turns.ts).
  const ticket = turnHeld();
  const boardItem = boardItemWrite(change, ticket, seen + change.changes.length);
  try {
    await transactWriteCounted({ ...change.writes, [BOARD_ITEM]: boardItem, ...logItems } as NamedItems, change.count);
    turnCommitted();
  } catch (error) {
    throw boardRefusal(error, change, ticket);
  }
  return events;
}

/** Two parts of one board item update (a transaction touches an item once). */
export function bothBoardChanges(a: BoardItemChange | undefined, b: BoardItemChange | undefined): BoardItemChange | undefined {
  if (!a || !b) return a ?? b;
  const join = (x?: string[], y?: string[]) => (x || y ? [...(x ?? []), ...(y ?? [])] : undefined);
  const condition = a.condition && b.condition ? `(${a.condition}) AND (${b.condition})` : (a.condition ?? b.condition);
  return {
    set: join(a.set, b.set),
    add: join(a.add, b.add),
    remove: join(a.remove, b.remove),
    delete: join(a.delete, b.delete),
    ...(condition ? { condition } : {}),
    names: { ...a.names, ...b.names },
    values: { ...a.values, ...b.values },
  };
}

/** Whether the board's queue lets a change through: it is empty, or the change holds its head. */
const turnAllows = (board: BoardRecord, ticket: number | undefined) =>
  ticket === undefined ? queueEmpty(board) : headOf(board) === ticket;

function updateExpression(own: BoardItemChange): string {
  const clauses = [`SET ${[`${SEQ_ATTRIBUTE} = :nextSeq`, ...(own.set ?? [])].join(', ')}`];
  if (own.add?.length) clauses.push(`ADD ${own.add.join(', ')}`);
  if (own.remove?.length) clauses.push(`REMOVE ${own.remove.join(', ')}`);
  if (own.delete?.length) clauses.push(`DELETE ${own.delete.join(', ')}`);
  return clauses.join(' ');
}

/** The highest sort key a log item can have: the upper bound of a range read of the log. */
const LOG_END = `${keys.logPrefix}\uffff`;

/**
 * Up to `limit` events after `after`, in order: one strongly consistent Query of the board's
 * partition, its log range only (log items sort after every other item of the board). `expired`
 * when the first event after `after` is no longer kept: past its `kept_until`, or already removed
 * by TTL (a number missing at the start of the range). TTL deletes lag by up to two days, so an
 * item still present is judged by `kept_until`, never by its presence.
 */
async function readLog(
  boardId: string,
  after: number,
  limit: number,
): Promise<{ events: BoardEvent[]; lastSeq: number; expired: boolean }> {
  // No board reaches MAX_SEQ, and a longer sort key would sort before the others.
  if (after >= MAX_SEQ) return { events: [], lastSeq: 0, expired: false };
  let items: StoredLogItem[] = [];
  await queryPages(
    {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':from': logSortKey(after + 1), ':to': LOG_END },
      Limit: limit,
    },
    (page: Item[]) => {
      items = page as unknown as StoredLogItem[];
      return false; // one page: `limit` items, so at least `limit` events when there are; 1 MB at most
    },
  );
  // The first item may be a run that began at or before `after`.
  const events = items
    .flatMap(eventsOfLogItem)
    .filter((event) => (event.seq ?? 0) > after)
    .slice(0, limit);
  const nowSeconds = Math.floor(Date.now() / 1000);
  const first = items[0];
  const expired = first !== undefined && (events[0]?.seq !== after + 1 || first.kept_until <= nowSeconds);
  return { events, lastSeq: items.at(-1)?.seq ?? 0, expired };
}

/**
 * `GET /boards/{id}/events`: a page of the log after `after`, and the board's latest `seq`. The
 * board item came with the access check, read before the page: a change committed in between is
 * in the page and higher than it, so `latest_seq` is the higher of the two.
 */
export async function readEventPage(
  scope: { boardId: string; board: BoardRecord },
  after: number,
  limit: number,
): Promise<{ events: BoardEvent[]; latest_seq: number }> {
  const latest = seqOf(scope.board);
  if (after >= latest) {
    // Nothing to read unless a change landed since the board was read: the page says.
    const { events, lastSeq } = await readLog(scope.boardId, after, limit);
    return { events, latest_seq: Math.max(latest, lastSeq) };
  }
  const { events, lastSeq, expired } = await readLog(scope.boardId, after, limit);
  if (expired || events.length === 0) {
    throw new ResyncRequired(
      `The events after seq ${after} are no longer kept (events are kept ${eventRetentionSeconds()} seconds): read the board again with GET /boards/{id} and go on from its seq.`,
    );
  }
  return { events, latest_seq: Math.max(latest, lastSeq) };
}
