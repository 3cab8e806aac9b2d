import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as pause } from 'node:timers/promises';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { callsSoFar, outsideDeadline, timeToDeadline, WRITE_BUDGET_MS } from '../runtime/deadline';
import {
  documentClient,
  getItems,
  type Item,
  isConditionFailure,
  itemAtConditionFailure,
  retryingConflicts,
  StorageBusy,
  tableName,
} from './db';
import type { BoardRecord, PostedChange } from './records';
import { type ItemKey, keys } from './table';

/**
 * Writers of a busy board take turns (docs/data-model.md, "Busy boards"). Every change of a board
 * is one transaction conditioned on the board's `seq` as read, so of N writers racing, one commits
 * and N - 1 pay a transaction for nothing, and go again: a cost that grows with the square of the
 * writers. Here a writer that loses once stops racing and queues:
 *
 * - The board item holds a ticket counter: `turn_next`, the next ticket to hand out, and
 *   `turn_head`, the ticket whose turn it is. The queue is empty when they are equal (or absent).
 * - A writer's first attempt is as it always was (one transaction, no extra call), with one more
 *   clause in the board's condition: the queue is empty. So an uncontended write costs what it
 *   did, and nobody overtakes the queue.
 * - A writer that lost takes a ticket: one UpdateItem, which also answers the board as it now is.
 *   It then reads the board (one GetItem, which never conflicts with the transactions in flight)
 *   about when its turn should come, by the board's average turn and within the write's budget
 *   of calls (untilLikelyTurn), and attempts its change once the head is its ticket, with the
 *   condition `turn_head = :ticket` and the update `turn_head = :ticket + 1`: the change and the
 *   hand-over are one write.
 * - A writer that leaves without a change while it holds the turn (a refusal, nothing to change,
 *   an error) hands the turn on with one UpdateItem. One that gives up before its turn comes (its
 *   request's deadline) leaves its ticket in `turn_gone`, and the first waiter to see the head at
 *   a ticket there moves it on at once.
 * - A writer that dies holding the turn (its function timed out or crashed) is skipped: a waiter
 *   that has seen the same head for TURN_DEADLINE_MS moves it on, on the condition that it is still
 *   that one (one UpdateItem, one winner). A holder skipped while alive finds the head past its
 *   ticket at its next attempt and queues again: a skip costs time, never correctness, since
 *   every change still requires the board's `seq` as read.
 * What a turn guarantees is only an order: correctness still rests on each change's conditions.
 *
 * Posted changes: one writer at a time is one transaction at a time, and a transaction has room
 * for many changes. So a queued writer whose change is a card create or edit posts it on the
 * board item (`turn_posts`, by ticket: one UpdateItem after its ticket), and the writer at the
 * head commits the posts of the tickets right behind its own that its change can go with
 * (postsBehind) and hands the turn past them all, in the one transaction. A writer whose post was
 * committed finds what says so when it reads the board (its reads fetch, beside the board item,
 * the item the head writes under its ticket: keys.turnDone) and answers with what that holds.
 * Withdrawing a post (the writer gives up, or leaves on an error) removes it in the same update
 * that gives up its ticket, on the condition that its turn has not come; the head's transaction
 * requires each post it commits to be there. So a post is committed once or not at all, and
 * never after its writer answered.
 */

/** How long a waiter lets the same head hold the turn before it moves it on (a dead holder). */
const TURN_DEADLINE_MS = 3_000;
/**
 * A waiter gives up (503) while its request still has the time to send its write and more: a
 * write is only sent with WRITE_BUDGET_MS left (lib/runtime/deadline.ts), and its ticket is let go.
 */
const GIVE_UP_MARGIN_MS = WRITE_BUDGET_MS + 500;
/** The longest a waiter sleeps between reads: well within TURN_DEADLINE_MS of its turn coming. */
const LONGEST_SLEEP_MS = TURN_DEADLINE_MS / 2;
/**
 * The DynamoDB calls one write may make up to its commit, the rate limiter's, its reads, its
 * ticket and its waits included. (What a change does after its commit has handed the turn on,
 * such as a label deletion's clearing of its cards or a board deletion's removal of its members,
 * holds up no waiter and is not counted here.)
 */
const CALL_BUDGET = 12;
/**
 * The calls a waiter plans its reads by (untilLikelyTurn), less what its change spends once its
 * turn comes (CallsAfterTurn): one less than CALL_BUDGET, so that a read past the plan (a turn
 * that came later than planned) still keeps the write within it (docs/data-model.md has the
 * figures).
 */
const PLANNED_CALLS = CALL_BUDGET - 1;

/**
 * The calls a change makes once its turn comes, by the board as its waiter last read it: its
 * write, and any read it makes at its turn (a create's of its column's end, when the board item
 * does not say where it is). A waiter keeps them out of its reads.
 */
export type CallsAfterTurn = (board: BoardRecord) => number;
/**
 * What a change that names no rule keeps back: one read at its turn (of what it writes on) and
 * its write: a member's or an assignee's change, a column's create, a webhook's, and a batch,
 * which reads its whole scope again at its turn (its calls serve up to 25 changes, not one). It
 * is the safe default: a change that reads at its turn and kept back less would spend a call past
 * its budget; one that kept back more only reads a little less while it waits.
 */
const READ_AND_WRITE: CallsAfterTurn = () => 2;
/**
 * A change that writes at its turn on what it read before, reading nothing more: a card's edit,
 * move, deletion, archive or labels, a comment's, a label's, a column's edit or deletion, a
 * board's edit or deletion, a member's addition. A create and a restore name their own rule.
 */
export const WRITE_ONLY: CallsAfterTurn = () => 1;
/** How much earlier than when it should be next in line a waiter further back wakes, in turns per root of the turns ahead. */
const MARGIN_PER_ROOT_TURN = 0.25;
/** The weight of the latest turn in the average when it is shorter than the average, and when longer (turnLengthAfter). */
const FALLING_WEIGHT = 0.2;
const RISING_WEIGHT = 0.15;
/** How much longer than the average one turn may count in it (turnLengthAfter). */
const TURN_GROWTH = 2;
/**
 * The estimate of one turn on a board that has timed none, and the average its first timed turn
 * is weighed against (turnLengthAfter), so that turn counts at most TURN_GROWTH times it. When
 * writers pile onto a board at once, their transactions and tickets meet each other in flight
 * and are sent again, and the first turns take a quarter of a second and more: counted whole,
 * the first one would become the board's average, which the waiters behind would sleep by long
 * after the turns had become short. A guess from this writer's own ticket misleads the same way.
 * A little above what a turn takes once the queue runs (35 to 55 ms at 16 writers on the local
 * stack), as the first turns are slower. On a much faster table the waiters of a board's first
 * burst sleep past some of their turns until the average has fallen to the real ones, a few
 * turns later; that happens once a board, since the board item keeps its average for the bursts
 * after.
 */
const FIRST_TURN_ESTIMATE_MS = 60;
/**
 * How far a waiter further back sleeps at most, before it has timed the queue's pace itself (two
 * hand-overs since it joined) and while it has more than three reads left: this share of its
 * `ahead` turns at the board's average, from now (untilLikelyTurn). Its next read then times the
 * real pace.
 */
const FIRST_SLEEP_SHARE = 0.6;

/**
 * The most posted changes the head commits with its own: a batch's 25 changes in all. A create
 * is at most three items of the transaction (its card, the item that tells its writer and, on a
 * board made before card-id prefixes, the card's own lookup), an edit two, beside the head's own four at most and the board's and log's: 79 at most,
 * within DynamoDB's 100 a transaction. The board item's condition grows by about 100 bytes a post,
 * within the 4 KB an expression may have.
 */
const MAX_COMBINED_POSTS = 24;

/**
 * A change a queued writer posts for the head to commit with its own: the post (made only when the
 * writer queues, so that a write that never queues pays nothing for it; undefined: nothing to
 * post), the key of the item whose presence says it committed under a ticket (keys.turnDone), and
 * the writer's answer from that item when another writer committed it.
 */
export interface TurnPost<T> {
  entry: () => PostedChange | undefined;
  probe: (ticket: number) => ItemKey;
  answer: (item: Item) => T;
}

/** A writer's place in its board's queue, for one request's change. */
interface Turn {
  boardId: string;
  ticket?: number;
  /** When the writer took its ticket (epoch ms): its turn cannot have begun before. */
  joinedAt?: number;
  /** The change committed with the turn (the hand-over was part of it), or by the head with its own. */
  done: boolean;
  /** What this writer posts while it queues, and the ticket it is posted under. */
  post?: Pick<TurnPost<unknown>, 'entry' | 'probe'>;
  postedAs?: number;
  /** A post behind it failed in its transaction: it takes only the posts before that ticket. */
  postsBefore?: number;
  /** What it would post no longer holds (dropPost): it queues without posting. */
  postStale?: boolean;
}

/** The change a writer posted was committed by the head with its own: the item it made. */
class CommittedByHead extends Error {
  override name = 'CommittedByHead';
  constructor(readonly item: Item) {
    super('committed by the writer at the head');
  }
}

/** The attribute name of the post of `ticket` in `turn_posts`. */
const postName = (ticket: number) => `#tp${ticket}`;

/**
 * Clauses that remove the post of `ticket` (none when `posted` is false), for an update of the
 * board item: the REMOVE part of its expression and the attribute name that part uses.
 */
const removingPost = (ticket: number, posted = true) =>
  posted
    ? {
        remove: ` REMOVE turn_posts.${postName(ticket)}`,
        names: { ExpressionAttributeNames: { [postName(ticket)]: String(ticket) } },
      }
    : { remove: '', names: {} };

/**
 * The update that gives up a ticket whose turn has not come (`turn_gone`), with its post when it
 * has one, so that nobody may commit the post once its writer has answered; refused, it hands back
 * the board as it now is.
 */
function givingUp(boardId: string, ticket: number, posted: boolean): UpdateCommand {
  const post = removingPost(ticket, posted);
  return new UpdateCommand({
    TableName: tableName(),
    Key: keys.board(boardId),
    UpdateExpression: `ADD turn_gone :tickets${post.remove}`,
    ConditionExpression: 'turn_head < :ticket',
    ...post.names,
    ExpressionAttributeValues: { ':ticket': ticket, ':tickets': new Set([ticket]) },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
}
const postsOf = (board: Pick<BoardRecord, 'turn_posts'>) => board.turn_posts ?? {};

/**
 * The posts the writer at the head (the running change's ticket) commits with its own: those of
 * the tickets right after its own, in order, while its change can go with each (`takes`, which
 * notes what it took) and each writer has not given up; at most MAX_COMBINED_POSTS. Only those
 * before a post that failed in its transaction (postsFailed).
 */
export function postsBehind(
  board: BoardRecord,
  takes: (post: PostedChange) => boolean,
): { ticket: number; post: PostedChange }[] {
  const turn = current.getStore();
  const ticket = turn?.ticket;
  if (ticket === undefined || headOf(board) !== ticket) return [];
  const posts = postsOf(board);
  const taken: { ticket: number; post: PostedChange }[] = [];
  const end = Math.min(nextOf(board), turn?.postsBefore ?? Number.POSITIVE_INFINITY);
  for (let next = ticket + 1; next < end && taken.length < MAX_COMBINED_POSTS; next++) {
    const post = posts[String(next)];
    // A post whose writer's deadline is near is left to it: the head's write must land before it.
    const expiring = post?.until !== undefined && Date.now() >= lastTakeAt(post.until);
    if (!post || expiring || board.turn_gone?.has(next) || !takes(post)) break;
    taken.push({ ticket: next, post });
  }
  return taken;
}

/**
 * What the running change would post no longer holds (the card its edit was built on changed
 * before it queued): it queues without posting, and makes its change at its own turn.
 */
export function dropPost(): void {
  const turn = current.getStore();
  if (turn) turn.postStale = true;
}

/**
 * The post of `ticket`, which the running change took, failed in its transaction (the card it
 * edits changed since its writer read it, its column is being deleted, or its writer withdrew
 * it): the change goes again with only the posts before it, and that post waits for its writer's
 * own turn, which then comes next.
 */
export function postsFailed(ticket: number): void {
  const turn = current.getStore();
  if (turn) turn.postsBefore = Math.min(turn.postsBefore ?? Number.POSITIVE_INFINITY, ticket);
}

/**
 * Which of the `taken` tickets (in order) the board as it now is refuses: the first whose post is
 * gone or whose ticket was given up.
 */
export function refusedPost(board: BoardRecord, taken: number[]): number | undefined {
  return taken.find((ticket) => postsOf(board)[String(ticket)] === undefined || board.turn_gone?.has(ticket));
}

const current = new AsyncLocalStorage<Turn>();

/** The turn the running change holds, if it queued (commitChange reads it). */
export const turnHeld = (): number | undefined => {
  const turn = current.getStore();
  return turn?.ticket;
};

/** Marks the running change's turn as handed over by its own transaction. */
export function turnCommitted(): void {
  const turn = current.getStore();
  if (turn) turn.done = true;
}

/** The ticket whose turn it is, and how many were handed out; equal when nobody queues. */
export const headOf = (board: Pick<BoardRecord, 'turn_head'>) => board.turn_head ?? 0;
const nextOf = (board: Pick<BoardRecord, 'turn_next'>) => board.turn_next ?? 0;
export const queueEmpty = (board: Pick<BoardRecord, 'turn_head' | 'turn_next'>) => headOf(board) >= nextOf(board);

/**
 * The board item's condition and update for a change, by whether it holds a turn: with one, the
 * hand-over past its own ticket and the `combined` tickets whose posts it commits (each required
 * to be there still), and the removal of every post the head passes (its own, those it commits,
 * and any left by writers skipped before).
 */
export function turnClauses(
  ticket: number | undefined,
  seen: Pick<BoardRecord, 'turn_at' | 'turn_ms' | 'turn_posts'>,
  deletesBoard = false,
  combined: number[] = [],
): { condition: string; set?: string[]; remove?: string[]; names?: Record<string, string>; values: Record<string, number> } {
  if (ticket === undefined) return { condition: 'attribute_not_exists(turn_next) OR turn_head >= turn_next', values: {} };
  if (deletesBoard) return { condition: 'turn_head = :turnTicket', values: { ':turnTicket': ticket } };
  const now = Date.now();
  const turnMs = turnLengthAfter(seen, now, current.getStore()?.joinedAt);
  const after = ticket + 1 + combined.length;
  const passed = Object.keys(postsOf(seen))
    .map(Number)
    .filter((posted) => posted < after);
  const names = Object.fromEntries(passed.map((posted) => [postName(posted), String(posted)]));
  return {
    // Each post taken is still there, and its ticket not given up.
    condition: [
      'turn_head = :turnTicket',
      ...combined.map((taken) => `attribute_exists(turn_posts.${postName(taken)}) AND NOT contains(turn_gone, :tg${taken})`),
    ].join(' AND '),
    // The hand-over, with the time it happens and how long turns take: what waiters time their reads by.
    set: ['turn_head = :turnAfter', 'turn_at = :turnAt', ...(turnMs === undefined ? [] : ['turn_ms = :turnMs'])],
    ...(passed.length > 0 ? { remove: passed.map((posted) => `turn_posts.${postName(posted)}`), names } : {}),
    values: {
      ...Object.fromEntries(combined.map((taken) => [`:tg${taken}`, taken])),
      ':turnTicket': ticket,
      ':turnAfter': after,
      ':turnAt': now,
      ...(turnMs === undefined ? {} : { ':turnMs': turnMs }),
    },
  };
}

/**
 * How long a turn takes, as an average weighted towards the latest (the one ending `now`, which
 * began at the last hand-over), over about the last five to seven turns: waiters further back
 * sleep for many turns at once, so one turn's noise must not move it much. It follows a shorter
 * turn more than a longer one, and a turn counts at most TURN_GROWTH times the average: a long
 * one is mostly a holder that noticed late, and counted whole it would send the waiters behind
 * to sleep past their turns, to notice late in turn (waking early costs a read; late, the
 * board's time). Turns that are longer for good (a slower table) still raise it, by up to 15% a
 * turn. The first timed turn counts against FIRST_TURN_ESTIMATE_MS the same way.
 * A turn its writer found free when it joined (the board had no queue until then) is not
 * counted: from the last hand-over it would count the time the board had no queue, from the
 * join only the time this writer took to build its write.
 */
function turnLengthAfter(
  seen: Pick<BoardRecord, 'turn_at' | 'turn_ms'>,
  now: number,
  joinedAt: number | undefined,
): number | undefined {
  const began = seen.turn_at;
  if (began === undefined || (joinedAt !== undefined && joinedAt > began)) return seen.turn_ms;
  const last = Math.min(TURN_DEADLINE_MS, Math.max(1, now - began));
  const before = seen.turn_ms ?? FIRST_TURN_ESTIMATE_MS;
  const weight = last < before ? FALLING_WEIGHT : RISING_WEIGHT;
  const average = (1 - weight) * before + weight * Math.min(last, TURN_GROWTH * before);
  // Tenths of a millisecond: rounded to whole ones, a short average could not grow.
  return Math.round(Math.max(1, average) * 10) / 10;
}

/**
 * Runs a change's attempts with a turn slot: `work` gets `wait`, which a lost race calls with the
 * board as it now is, to queue (or keep waiting) and get the board as it is when the turn comes.
 * A turn still held when `work` ends without its change is handed on.
 */
export async function withTurn<T>(
  { boardId, callsAfterTurn = READ_AND_WRITE, post }: { boardId: string; callsAfterTurn?: CallsAfterTurn; post?: TurnPost<T> },
  work: (wait: (board: BoardRecord) => Promise<BoardRecord>) => Promise<T>,
): Promise<T> {
  const turn: Turn = { boardId, done: false, ...(post ? { post: { entry: post.entry, probe: post.probe } } : {}) };
  return current.run(turn, async () => {
    const waiter = new Waiter(turn, callsAfterTurn);
    try {
      return await work((board) => waiter.untilTurn(board));
    } catch (error) {
      // The head committed this writer's posted change with its own: the answer is what it made.
      if (post && error instanceof CommittedByHead) return post.answer(error.item);
      // Leaving on an error while its post waits, a writer withdraws it first (even past its
      // deadline: it writes no change): the head may have committed it meanwhile.
      if (post && turn.ticket !== undefined && turn.postedAs === turn.ticket && !turn.done) {
        // The post's `until` is this request's deadline, read here while it is still in scope.
        const { until } = untilOf();
        const made = await outsideDeadline(() => settlePost(turn, until)).catch(() => undefined);
        if (made) return post.answer(made);
      }
      throw error;
    } finally {
      // Best effort, and even past the request's deadline (it writes no change): a ticket not let
      // go is a turn the next waiter skips after TURN_DEADLINE_MS.
      const { ticket } = turn;
      if (ticket !== undefined && !turn.done) {
        const posted = ticket === turn.postedAs;
        await outsideDeadline(() => letGo(boardId, ticket, posted)).catch(() => undefined);
      }
    }
  });
}

/** A queued writer's view of the turns going by. */
class Waiter {
  /** The head this writer last saw, and since when it has seen it (a head that stays too long is skipped). */
  private seenHead = -1;
  private seenAt = 0;
  /**
   * A hand-over this writer saw (the head, and when it moved there): the queue's pace is timed
   * from it. Kept through a later join: the pace is the board's, not the ticket's.
   */
  private paceFrom?: { head: number; at: number };

  constructor(
    private readonly turn: Turn,
    private readonly callsAfterTurn: CallsAfterTurn,
  ) {}

  /**
   * The board as it is when the turn is this writer's: queued first if it holds no ticket, or
   * holds one the head has passed (it was skipped while it was slow).
   */
  async untilTurn(board: BoardRecord): Promise<BoardRecord> {
    let seen = board;
    for (;;) {
      const ticket = this.turn.ticket;
      // Past a ticket this writer posted its change under: committed by the head, or skipped.
      if (ticket !== undefined && ticket === this.turn.postedAs && headOf(seen) > ticket) await this.committedByHead();
      if (ticket === undefined || headOf(seen) > ticket) {
        seen = await this.join();
        continue;
      }
      if (headOf(seen) === ticket) return seen;
      // The head is at a ticket whose writer gave up: nobody will use it.
      if (seen.turn_gone?.has(headOf(seen))) {
        seen = await skip(seen, 'gone');
        continue;
      }
      this.observe(seen);
      if (timeToDeadline() < GIVE_UP_MARGIN_MS) {
        // A posted change is withdrawn first: the head may have committed it meanwhile.
        if (ticket === this.turn.postedAs) {
          const now = await this.withdraw();
          if (now) {
            seen = now;
            continue;
          }
        }
        throw new StorageBusy('the board stayed too busy: the queue of writers did not reach this one in time');
      }
      if (performance.now() - this.seenAt > TURN_DEADLINE_MS) {
        seen = await skip(seen, 'late');
        continue;
      }
      // Read again about when the turn before this writer's should end: every read is a call, and
      // one too early costs a call, one too late the board's time.
      await pause(this.untilLikelyTurn(seen, ticket));
      seen = await this.read(seen);
    }
  }

  /**
   * The board again; for a writer that posted its change, with the item that says it committed,
   * in the same call: found, the head committed it (CommittedByHead).
   */
  private async read(board: BoardRecord): Promise<BoardRecord> {
    const { post, postedAs } = this.turn;
    if (!post || postedAs === undefined || postedAs !== this.turn.ticket) return readBoard(board);
    const probe = post.probe(postedAs);
    const found = await getItems([keys.board(board.id), probe]);
    const now = found.get<BoardRecord>(keys.board(board.id));
    const made = found.get<Item>(probe);
    // Committed before the board went: the change landed, and its answer is what the head made.
    if (made) {
      this.turn.done = true;
      throw new CommittedByHead(made);
    }
    if (!now) throw new BoardGone();
    return now;
  }

  /**
   * The head has passed this writer's ticket, under which it posted its change: the head
   * committed it, or skipped this writer (it was at the head and slow to notice). One read of the
   * item the change makes says which; skipped, the writer queues again.
   */
  private async committedByHead(): Promise<void> {
    const { post, postedAs } = this.turn;
    if (!post || postedAs === undefined) return;
    const probe = post.probe(postedAs);
    const made = (await getItems([probe])).get<Item>(probe);
    if (made) {
      this.turn.done = true;
      throw new CommittedByHead(made);
    }
  }

  /**
   * Withdraws this writer's post with its ticket (withdrawPost): the board when its turn came
   * meanwhile, to attempt the change after all; undefined when withdrawn or passed by (the writer
   * gives up); committed by the head: CommittedByHead.
   */
  private async withdraw(): Promise<BoardRecord | undefined> {
    const settled = await withdrawPost(this.turn);
    if (settled.state === 'turn') return settled.board;
    if (settled.state === 'committed') throw new CommittedByHead(settled.item);
    return undefined;
  }

  /**
   * Posts this writer's change under its ticket, unless its turn has come meanwhile: one
   * UpdateItem, answering the board as it now is.
   */
  private async postChange(ticket: number, entry: PostedChange): Promise<BoardRecord | undefined> {
    try {
      const { Attributes } = await send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.board(this.turn.boardId),
          UpdateExpression: `SET turn_posts.${postName(ticket)} = :post`,
          ConditionExpression: 'turn_head < :ticket AND attribute_exists(turn_posts)',
          ExpressionAttributeNames: { [postName(ticket)]: String(ticket) },
          ExpressionAttributeValues: { ':ticket': ticket, ':post': { ...entry, ...untilOf() } },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.turn.postedAs = ticket;
      return Attributes as BoardRecord;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const board = itemAtConditionFailure<BoardRecord>(error);
      if (!board) throw new BoardGone();
      // The head already past the ticket: the post was sent again after a first send that landed
      // (its answer lost), and the head took it. Taken as posted, the writer looks for what the
      // head made before anything else.
      if (headOf(board) > ticket) this.turn.postedAs = ticket;
      return board;
    }
  }

  /**
   * Takes the next ticket: one UpdateItem, answering the board as it now is. A writer with a
   * change to post posts it under that ticket when its turn has not come yet (one more UpdateItem,
   * since the ticket is known only now; the first makes sure `turn_posts` exists).
   */
  private async join(): Promise<BoardRecord> {
    const entry = this.turn.postStale ? undefined : this.turn.post?.entry();
    if (entry === undefined) this.turn.postStale = true;
    const post = entry !== undefined;
    const { Attributes } = await send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.board(this.turn.boardId),
        // The first ticket of a board starts both counters: its holder's turn is at once.
        UpdateExpression: `SET turn_next = if_not_exists(turn_next, :zero) + :one, turn_head = if_not_exists(turn_head, :zero), turn_at = if_not_exists(turn_at, :now)${post ? ', turn_posts = if_not_exists(turn_posts, :noPosts)' : ''}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':now': Date.now(), ...(post ? { ':noPosts': {} } : {}) },
        ReturnValues: 'ALL_NEW',
      }),
    ).catch((error: unknown) => {
      if (isConditionFailure(error)) throw new BoardGone();
      throw error;
    });
    let board = Attributes as BoardRecord;
    const ticket = (board.turn_next ?? 1) - 1;
    this.turn.ticket = ticket;
    this.turn.joinedAt = Date.now();
    if (board.turn_at !== undefined) this.paceFrom ??= { head: headOf(board), at: board.turn_at };
    if (entry && headOf(board) < ticket) board = (await this.postChange(ticket, entry)) ?? board;
    return board;
  }

  /**
   * How long to wait before reading the board again. Every read is a call of the write's budget,
   * and a read after its turn came is the board's time lost (nothing commits until the holder
   * notices). With turns `turn_ms` long (on average) and the head's since `turn_at`, this
   * writer's turn likely comes `ahead` turns after the head's began:
   * - further back in the queue, it reads about when it should be next in line, less a margin:
   *   turns vary and their variations add up, so the margin grows with the root of the turns
   *   between (a read too early costs a call; too late, its turn sits unused). It goes by the
   *   faster of the board's average and the pace the queue has kept since it joined (no faster
   *   than half the average: a skip moves the head at once, and a pace measured across skips
   *   would be shorter than any turn), and until it has timed that pace, with reads to spare,
   *   sleeps at most FIRST_SLEEP_SHARE of the way: the average lags a queue that speeds up (after
   *   a cold start), and one long sleep by it would end well after the turn came, with the whole
   *   board waiting for this writer to notice;
   * - next in line, it reads every third of a turn;
   * - when the head's turn runs long (a slow holder, or one that died), which holds up every
   *   waiter, half as far apart as it has run so far, and, further back, no sooner than half the
   *   turns between could pass: a stall's reads grow with its logarithm, and noticing its end
   *   late costs at most half of it again;
   * - with two of its planned reads left (PLANNED_CALLS), it aims at when it should be next in
   *   line, or, next in line, at the likely hand-over; with one left or none, at half a turn past
   *   its likely turn. A write's calls stay bounded, and only the writers of a rough stretch
   *   notice late.
   * The average is the board's (every hand-over updates it), not what this writer saw: a waiter
   * that saw the slow turns of a cold start would sleep through the fast ones that follow. Its
   * last two reads go by the queue's pace since it joined when that is slower, up to TURN_GROWTH
   * times the average: a rough stretch is what spends a budget, and the average lags it, but a
   * pace that counts a cold start's first turns (a quarter of a second and more each) would sleep
   * through the short ones after them.
   */
  private untilLikelyTurn(board: BoardRecord, ticket: number): number {
    const perTurn = board.turn_ms ?? FIRST_TURN_ESTIMATE_MS;
    const ahead = turnsAhead(board, ticket);
    // This read included.
    const readsLeft = PLANNED_CALLS - this.callsAfterTurn(board) - callsSoFar();
    const now = Date.now();
    const headSince = board.turn_at ?? now;
    const stalledFor = now - headSince;
    const measured = this.paceSinceJoin(board);
    let wait: number;
    if (readsLeft <= 2) {
      // The last reads: a read that comes before the turn is a call past the budget.
      const pace = Math.max(perTurn, Math.min(measured, TURN_GROWTH * perTurn));
      const likelyTurn = headSince + ahead * pace;
      if (readsLeft <= 1) wait = Math.max(likelyTurn + pace / 2 - now, pace / 2, stalledFor);
      else if (ahead > 1) wait = Math.max(likelyTurn - pace - now, ((ahead - 1) * perTurn) / 2, perTurn / 3, stalledFor / 2);
      else wait = Math.max(likelyTurn - now, perTurn / 3, stalledFor / 2);
    } else if (ahead > 1) {
      const pace = measured > 0 ? Math.min(perTurn, Math.max(measured, perTurn / 2)) : perTurn;
      const early = (1 + MARGIN_PER_ROOT_TURN * Math.sqrt(ahead)) * pace;
      let untilNearly = Math.max(headSince + ahead * pace - early - now, ((ahead - 1) * pace) / 2, pace / 3);
      if (measured === 0 && readsLeft > 3) untilNearly = Math.min(untilNearly, FIRST_SLEEP_SHARE * ahead * perTurn);
      wait = Math.max(untilNearly, stalledFor / 2);
    } else {
      wait = Math.max(perTurn / 3, stalledFor / 2);
    }
    // Never so long that a turn that came early sits unused until the waiters behind skip it as
    // dead (TURN_DEADLINE_MS), nor past the time this request has.
    return Math.max(3, Math.min(wait, LONGEST_SLEEP_MS, timeToDeadline() - GIVE_UP_MARGIN_MS));
  }

  /**
   * How long a turn has taken since this writer joined: the time between two hand-overs, the one
   * it saw when it joined and the latest, over the turns between them; 0 until the head has moved
   * twice since (or when the holders' clocks disagree).
   */
  private paceSinceJoin(board: BoardRecord): number {
    const from = this.paceFrom;
    const moved = from ? headOf(board) - from.head : 0;
    if (!from || moved < 2 || board.turn_at === undefined) return 0;
    return Math.max(0, board.turn_at - from.at) / moved;
  }

  /** Notes since when the head has not moved. */
  private observe(board: BoardRecord): void {
    const head = headOf(board);
    if (head !== this.seenHead) {
      this.seenHead = head;
      this.seenAt = performance.now();
    }
  }
}

/**
 * How many turns come before `ticket`'s change is done, counted in commits rather than tickets: a
 * ticket with a change posted goes with the commit before it (up to MAX_COMBINED_POSTS), one
 * without is a commit of its own. So a writer waits as long as the commits ahead take: behind 15
 * posted creates, two turns, not sixteen. (Whether the holder of a commit can take a post also
 * depends on the two changes; the count assumes it can.)
 */
function turnsAhead(board: BoardRecord, ticket: number): number {
  const posts = postsOf(board);
  let commits = 1;
  let riding = 0;
  for (let between = headOf(board) + 1; between < ticket; between++) {
    if (posts[String(between)] && riding < MAX_COMBINED_POSTS) {
      riding++;
      continue;
    }
    commits++;
    riding = 0;
  }
  return commits;
}

/**
 * Until when the head may commit a post of the running request: its deadline, past which its
 * writer has answered (503). The head keeps a write's budget of it in hand (postsBehind).
 */
function untilOf(): { until?: number } {
  const left = timeToDeadline();
  return Number.isFinite(left) ? { until: Date.now() + left } : {};
}

/** The last moment a head takes a post that is good `until`: a write's budget before it. */
const lastTakeAt = (until: number) => until - WRITE_BUDGET_MS;

/**
 * Withdraws the running writer's post and gives up its ticket in one update, on the condition
 * that its turn has not come: `withdrawn`. Refused, the turn came (`turn`, with the board) or went
 * past it: committed by the head (`committed`, with what it made) or skipped (`passed`).
 */
async function withdrawPost(
  turn: Turn,
): Promise<{ state: 'withdrawn' | 'passed' } | { state: 'turn'; board: BoardRecord } | { state: 'committed'; item: Item }> {
  const ticket = turn.postedAs!;
  try {
    await send(givingUp(turn.boardId, ticket, true));
    turn.done = true;
    return { state: 'withdrawn' };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const board = itemAtConditionFailure<BoardRecord>(error);
    if (!board) throw new BoardGone();
    if (headOf(board) === ticket) return { state: 'turn', board };
    turn.done = true;
    const probe = turn.post!.probe(ticket);
    const made = (await getItems([probe])).get<Item>(probe);
    return made ? { state: 'committed', item: made } : { state: 'passed' };
  }
}

/** The first pause between withdrawals DynamoDB failed, doubled up to a second. */
const SETTLE_RETRY_MS = 125;

/**
 * Withdraws the post of a writer that leaves on an error (withdrawPost), and answers what the
 * head made of it when the head committed it first; undefined when it has not landed and never
 * will. DynamoDB failing the update itself (not its condition), the withdrawal is sent again
 * (the same update twice withdraws once) while a head may still take the post: until a write's
 * budget before its `until` (postsBehind). Any answer settles it; the ticket keeps its place
 * meanwhile, so a turn that comes to it meanwhile is seen and handed on. Past that, nobody takes
 * the post any more: the writer waits half a budget more for a head's transaction sent just
 * before then, and reads the item a commit writes under its ticket. Throws when the outcome
 * stays unknown: the post has no `until` (no deadline: any head may take it at any time), or
 * that read fails too.
 */
async function settlePost(turn: Turn, until: number | undefined): Promise<Item | undefined> {
  const { postedAs: ticket, post } = turn;
  for (let attempt = 0; ; attempt++) {
    try {
      const settled = await withdrawPost(turn);
      return settled.state === 'committed' ? settled.item : undefined;
    } catch (error) {
      // The board went away: nothing of it can commit any more.
      if (error instanceof BoardGone) return undefined;
      if (until === undefined) throw error;
      const untilUntaken = lastTakeAt(until) - Date.now();
      if (untilUntaken <= 0) break;
      await pause(Math.min(untilUntaken, SETTLE_RETRY_MS * 2 ** Math.min(attempt, 3)));
    }
  }
  await pause(Math.max(0, lastTakeAt(until) + WRITE_BUDGET_MS / 2 - Date.now()));
  const probe = post!.probe(ticket!);
  const made = (await getItems([probe]).catch(() => getItems([probe]))).get<Item>(probe);
  if (made) turn.done = true;
  return made;
}

/**
 * A single write of the board item meets the transactions of the changes in flight on it
 * (TransactionConflictException): it is sent again, with jitter, a few times (retryingConflicts).
 */
const send = (command: UpdateCommand) => retryingConflicts(() => documentClient.send(command));

/** The board went away while a writer queued: its change meets that in its own condition. */
class BoardGone extends Error {
  override name = 'BoardGone';
}

/**
 * The board when this writer's turn comes; the board as it was if it went away meanwhile (the
 * attempt's own condition then says 404). Every writer that takes turns waits through it.
 */
export async function waitOrGone(
  untilTurn: (board: BoardRecord) => Promise<BoardRecord>,
  board: BoardRecord,
): Promise<BoardRecord> {
  try {
    return await untilTurn(board);
  } catch (error) {
    if (!(error instanceof BoardGone)) throw error;
    return board;
  }
}

async function readBoard(board: BoardRecord): Promise<BoardRecord> {
  const found = await getItems([keys.board(board.id)]);
  const now = found.get<BoardRecord>(keys.board(board.id));
  if (!now) throw new BoardGone();
  return now;
}

/**
 * Moves the head past a ticket nobody will use (`gone`: its writer gave up) or past a holder that
 * has kept it too long (`late`); one waiter wins, the others see it moved.
 */
async function skip(board: BoardRecord, why: 'gone' | 'late'): Promise<BoardRecord> {
  const head = headOf(board);
  // A post left under the skipped ticket goes with it.
  const post = removingPost(head, postsOf(board)[String(head)] !== undefined);
  try {
    const { Attributes } = await send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.board(board.id),
        UpdateExpression: `${
          why === 'gone'
            ? 'SET turn_head = :after, turn_at = :now DELETE turn_gone :heads'
            : 'SET turn_head = :after, turn_at = :now'
        }${post.remove}`,
        ...post.names,
        ConditionExpression: why === 'gone' ? 'turn_head = :head AND contains(turn_gone, :head)' : 'turn_head = :head',
        ExpressionAttributeValues: {
          ':head': head,
          ':after': head + 1,
          ':now': Date.now(),
          ...(why === 'gone' ? { ':heads': new Set([head]) } : {}),
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return Attributes as BoardRecord;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const now = itemAtConditionFailure<BoardRecord>(error);
    if (!now) throw new BoardGone();
    return now;
  }
}

/**
 * Lets the ticket go after a change that did not commit with it: hands the turn on when it is this
 * writer's, or, when its turn has not come yet (it gave up waiting), leaves the ticket in
 * `turn_gone` for the waiters to skip at once. A head already past it needs nothing.
 */
async function letGo(boardId: string, ticket: number, posted = false): Promise<void> {
  const post = removingPost(ticket, posted);
  try {
    await send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.board(boardId),
        UpdateExpression: `SET turn_head = :after, turn_at = :now${post.remove}`,
        ConditionExpression: 'turn_head = :ticket',
        ...post.names,
        ExpressionAttributeValues: { ':ticket': ticket, ':after': ticket + 1, ':now': Date.now() },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const board = itemAtConditionFailure<BoardRecord>(error);
    if (!board || headOf(board) > ticket) return;
    await send(givingUp(boardId, ticket, posted)).catch((refused: unknown) => {
      // Its turn came meanwhile: hand it on after all.
      if (isConditionFailure(refused)) return letGo(boardId, ticket, posted);
      throw refused;
    });
  }
}
