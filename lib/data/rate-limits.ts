import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  documentClient,
  getItems,
  isConditionFailure,
  isTransactionConflict,
  type NamedItems,
  namesOf,
  refusalOf,
  sendAgainOnConflict,
  type TransactItem,
  tableName,
  transactNamed,
} from './db';
import { type ItemKey, keyHash, TTL_ATTRIBUTE } from './table';

/**
 * The rate limiter's counters (docs/rate-limits.md): one item per
 * subject and fixed window, in the service's table, so that every function instance counts on the
 * same number. It knows nothing of HTTP: the caller names the subject and the quota.
 *
 *   RATE#user#<userId>        #WINDOW#<window start>   requests of a user in one window
 *   RATE#address#<sha256>     #WINDOW#<window start>   requests from one client address (its hash:
 *                                                      no address is stored)
 *
 * A window starts at a multiple of its length, counted in seconds from the Unix epoch. Counting is
 * one UpdateItem (1 write unit): an atomic ADD under the condition that the count is below the
 * quota, so of any number of concurrent requests exactly `quota` succeed in a window and every
 * later one fails its condition and changes nothing (a failed condition still costs its write unit).
 * Each item carries a `ttl` one window after its own ends; nothing reads a past window.
 *
 * A count never goes down within its window, so once a subject's window refused a request here,
 * every later request of that window is refused too: this instance remembers that until the window
 * ends and refuses them without a write (a loop against one function instance costs no write
 * units once it is over its quota).
 *
 * A route whose first table call is its own transaction (POST /boards, POST /realtime/tickets) does
 * not count with a request of its own: it takes a `FoldedCount` (`transactWriteCounted`), the same conditional increment as one more item of
 * that transaction (no round trip before it; a refusal cancels the transaction, so nothing else is
 * written). Its count comes back from a consistent read of the counter sent beside the transaction.
 */
export type RateLimitSubject = { policy: 'user'; userId: string } | { policy: 'address'; address: string };

export interface RateLimitCount {
  /** Whether this request is within the quota (it was counted); false: the window's quota is used up. */
  allowed: boolean;
  /** The window's count after this request (the quota when refused). */
  count: number;
  /** When the window ends, in epoch milliseconds. */
  resetAt: number;
}

/** The start of the fixed window `at` (epoch ms) falls in, in epoch seconds. */
const windowStartOf = (at: number, windowSeconds: number) => Math.floor(at / 1000 / windowSeconds) * windowSeconds;

function rateLimitKey(subject: RateLimitSubject, windowStart: number): ItemKey {
  const id = subject.policy === 'user' ? subject.userId : keyHash(subject.address);
  return { pk: `RATE#${subject.policy}#${id}`, sk: `#WINDOW#${windowStart}` };
}

/** Counter items (`pk` and `sk`) of windows this instance saw refused, until their window ends (epoch ms). */
const exhausted = new Map<string, number>();
/** A bound on that memory: past it, the windows that ended are forgotten, and if all are current, all. */
const EXHAUSTED_LIMIT = 10_000;

function rememberExhausted(id: string, resetAt: number, now: number): void {
  if (exhausted.size >= EXHAUSTED_LIMIT) {
    for (const [key, until] of exhausted) if (until <= now) exhausted.delete(key);
    if (exhausted.size >= EXHAUSTED_LIMIT) exhausted.clear();
  }
  exhausted.set(id, resetAt);
}

/**
 * The counter's conditional increment: the same for a request of its own and an item of a
 * transaction. A request that costs `cost` requests (a batch: one per operation) is counted whole
 * or not at all: it needs `cost` left, so its condition is that the count is at most quota - cost.
 */
function increment(quota: number, windowStart: number, windowSeconds: number, cost = 1) {
  return {
    UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
    ConditionExpression:
      cost === 1 ? 'attribute_not_exists(#count) OR #count < :quota' : 'attribute_not_exists(#count) OR #count <= :room',
    ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': TTL_ATTRIBUTE } as Record<string, string>,
    ExpressionAttributeValues: {
      ':one': cost,
      ...(cost === 1 ? { ':quota': quota } : { ':room': quota - cost }),
      ':type': 'rate_limit',
      ':ttl': windowStart + 2 * windowSeconds,
    } as Record<string, unknown>,
  };
}

/**
 * A count sent while a transaction holds the same counter (a POST /boards of the same subject in
 * flight) is refused with TransactionConflictException, which the SDK does not retry: it says
 * nothing about the quota, so it is sent again (a few times, with jitter) before the request fails
 * open.
 */
const CONFLICT_RETRY = { conflict: isTransactionConflict, attempts: 5, stepMs: 10 };

/**
 * The refusal of a request of `subject` in the window of `at` when this instance already saw that
 * window refused (no call needed: a count never goes down within its window); undefined otherwise.
 */
export function usedUpHere(subject: RateLimitSubject, quota: number, windowSeconds: number, at: number = Date.now()) {
  const windowStart = windowStartOf(at, windowSeconds);
  const key = rateLimitKey(subject, windowStart);
  const resetAt = (windowStart + windowSeconds) * 1000;
  return (exhausted.get(`${key.pk}\u0000${key.sk}`) ?? 0) > at ? { allowed: false, count: quota, resetAt } : undefined;
}

/** Counts one request of `subject` in the window of `at` (epoch ms), unless its quota is used up. */
export async function countRequest(
  subject: RateLimitSubject,
  quota: number,
  windowSeconds: number,
  at: number = Date.now(),
  cost = 1,
): Promise<RateLimitCount> {
  const windowStart = windowStartOf(at, windowSeconds);
  const resetAt = (windowStart + windowSeconds) * 1000;
  const key = rateLimitKey(subject, windowStart);
  const id = `${key.pk}\u0000${key.sk}`;
  if ((exhausted.get(id) ?? 0) > at) return { allowed: false, count: quota, resetAt };
  try {
    const out = await sendAgainOnConflict(
      () =>
        documentClient.send(
          new UpdateCommand({
            TableName: tableName(),
            Key: key,
            ...increment(quota, windowStart, windowSeconds, cost),
            ReturnValues: 'UPDATED_NEW',
          }),
        ),
      CONFLICT_RETRY,
    );
    return { allowed: true, count: Number(out.Attributes?.count ?? cost), resetAt };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // A costlier request refused leaves room for smaller ones: the window is not used up.
    if (cost === 1) rememberExhausted(id, resetAt, at);
    return { allowed: false, count: quota, resetAt };
  }
}

/** Thrown by a transaction that carried a `FoldedCount` its counter refused: the quota is used up, nothing was written. */
class QuotaUsedUp extends Error {
  override name = 'QuotaUsedUp';
  constructor() {
    super('the rate limit quota of this window is used up');
  }
}

/** The attribute a folded count marks the counter with: which request's increment the counter last took. */
const MARKER_ATTRIBUTE = 'last_request';

/**
 * One request's count made inside the caller's own TransactWriteItems (POST /boards): `claim()`
 * gives the counter's conditional increment as one more item of the transaction, and the caller
 * reports how the transaction ended (`committed()`, or `cancelled()` with the item's own code from
 * CancellationReasons). `result()` is then the count, or undefined when the request was not
 * counted (the transaction failed for another reason, or was never sent): the caller counts it on
 * its own then.
 *
 * A committed transaction returns nothing, so the window's count comes from a strongly consistent
 * read of the counter (`getItems`: BatchGetItem), sent beside the transaction (no round trip after it). The increment marks
 * the counter with this request's token: a read that sees the token came after this increment and
 * its count includes it; one that does not came before it (this request is then the count + 1).
 * Exact whenever the subject's requests do not overlap; while they do, a read can straddle other
 * increments, so `r` can be off by those (never by a refusal: who is served is decided by the
 * condition alone).
 */
export class FoldedCount {
  private readonly token = randomUUID();
  private readonly windowStart: number;
  private readonly key: ItemKey;
  readonly resetAt: number;
  private state: 'held' | 'sent' | 'committed' | 'refused' | 'refusedWhole' | 'failed' = 'held';
  private read?: Promise<{ count?: number; marker?: string } | undefined>;

  constructor(
    subject: RateLimitSubject,
    private readonly quota: number,
    private readonly windowSeconds: number,
    private readonly at: number = Date.now(),
    /** What the request counts as (a batch: its operations); see `increment`. */
    readonly cost = 1,
  ) {
    this.windowStart = windowStartOf(at, windowSeconds);
    this.resetAt = (this.windowStart + windowSeconds) * 1000;
    this.key = rateLimitKey(subject, this.windowStart);
  }

  private get id() {
    return `${this.key.pk}\u0000${this.key.sk}`;
  }

  /**
   * The counter's increment, for the caller's transaction; starts the read beside it. Throws
   * QuotaUsedUp, without a write, when this instance already saw the window refused.
   */
  claim(): TransactItem {
    // A transaction that failed for another reason (a lost race) is sent again with the count.
    if (this.state !== 'held' && this.state !== 'failed') throw new Error('a folded count is claimed once');
    if ((exhausted.get(this.id) ?? 0) > this.at) {
      this.state = 'refused';
      throw new QuotaUsedUp();
    }
    this.state = 'sent';
    const { ExpressionAttributeNames, ExpressionAttributeValues, ...expression } = increment(
      this.quota,
      this.windowStart,
      this.windowSeconds,
      this.cost,
    );
    this.read = getItems([this.key]).then(
      (found) => {
        const item = found.get<Record<string, unknown>>(this.key);
        return { count: item?.count as number | undefined, marker: item?.[MARKER_ATTRIBUTE] as string | undefined };
      },
      (error: unknown) => {
        this.readError = error;
        return undefined;
      },
    );
    return {
      Update: {
        Key: this.key,
        ...expression,
        UpdateExpression: `${expression.UpdateExpression}, #marker = :marker`,
        ExpressionAttributeNames: { ...ExpressionAttributeNames, '#marker': MARKER_ATTRIBUTE },
        ExpressionAttributeValues: { ...ExpressionAttributeValues, ':marker': this.token },
      },
    };
  }

  /** Why the read beside the transaction failed, if it did (the count is then unknown). */
  readError: unknown;

  committed(): void {
    if (this.state === 'sent') this.state = 'committed';
  }

  /**
   * The transaction failed; `refused`: the counter item's own condition failed (the quota is used
   * up: nothing was written), rather than another item's, or no answer at all (throttled). True
   * when the counter refused.
   */
  cancelled(refused: boolean): boolean {
    if (this.state !== 'sent') return this.state === 'refused' || this.state === 'refusedWhole';
    // A costlier request refused leaves room for smaller ones: the window is not used up.
    const whole = refused && this.cost > 1;
    this.state = whole ? 'refusedWhole' : refused ? 'refused' : 'failed';
    if (this.state === 'refused') rememberExhausted(this.id, this.resetAt, this.at);
    return refused;
  }

  /** Refused for its cost alone, with room left for smaller requests (the caller counts it as one). */
  get refusedWhole(): boolean {
    return this.state === 'refusedWhole';
  }

  /**
   * How the request stands once the transaction is answered: refused, served (its count from the
   * read; undefined if the read failed) or undefined when it was not counted at all (`counted` false).
   */
  async result(): Promise<{ counted: boolean; count?: RateLimitCount }> {
    if (this.state === 'refused') return { counted: true, count: { allowed: false, count: this.quota, resetAt: this.resetAt } };
    if (this.state !== 'committed') return { counted: false };
    const seen = await this.read;
    if (!seen) return { counted: true };
    const before = seen.count ?? 0;
    const count = seen.marker === this.token ? before : Math.min(this.quota, before + this.cost);
    return { counted: true, count: { allowed: true, count: Math.max(1, count), resetAt: this.resetAt } };
  }
}

/** The name of the counter's increment in a counted transaction: no caller's item takes it. */
const COUNTER_ITEM = '$counter';

/**
 * The caller's named TransactWriteItems with `count`'s increment after them (none without a
 * count), so the caller reads a cancellation by its items' names (`refusalOf(error, namesOf(items))`).
 * Throws QuotaUsedUp when the counter refused (the transaction was cancelled, or never sent: this
 * instance already saw the window refused), so nothing was written; any other failure is rethrown
 * as the transaction's own, for the caller to read its items (the request is then counted on its
 * own, by lib/http/rate-limit.ts). The fold's one implementation: createBoard (POST /boards) and
 * issueTicket (POST /realtime/tickets) send through it.
 */
export async function transactWriteCounted<N extends string>(
  items: NamedItems<N> & { readonly [COUNTER_ITEM]?: never },
  count?: FoldedCount,
): Promise<void> {
  const names = [...namesOf<N | typeof COUNTER_ITEM>(items), COUNTER_ITEM];
  try {
    await transactNamed({ ...items, [COUNTER_ITEM]: count?.claim() });
  } catch (error) {
    // The counter's own reason tells its refusal apart from the others' (or from no answer at all).
    if (count?.cancelled(refusalOf(error, names)?.failed.has(COUNTER_ITEM) === true)) throw new QuotaUsedUp();
    throw error;
  }
  count?.committed();
}
