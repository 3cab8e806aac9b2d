import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, isConditionFailure, tableName } from './db';
import { type ItemKey, keyHash, TTL_ATTRIBUTE } from './table';

/**
 * The rate limiter's counters (api-contract.md "Rate limits", docs/rate-limits.md): one item per
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
export const windowStartOf = (at: number, windowSeconds: number) => Math.floor(at / 1000 / windowSeconds) * windowSeconds;

export function rateLimitKey(subject: RateLimitSubject, windowStart: number): ItemKey {
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

/** Counts one request of `subject` in the window of `at` (epoch ms), unless its quota is used up. */
export async function countRequest(
  subject: RateLimitSubject,
  quota: number,
  windowSeconds: number,
  at: number = Date.now(),
): Promise<RateLimitCount> {
  const windowStart = windowStartOf(at, windowSeconds);
  const resetAt = (windowStart + windowSeconds) * 1000;
  const key = rateLimitKey(subject, windowStart);
  const id = `${key.pk}\u0000${key.sk}`;
  if ((exhausted.get(id) ?? 0) > at) return { allowed: false, count: quota, resetAt };
  try {
    const out = await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :quota',
        ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':one': 1, ':quota': quota, ':type': 'rate_limit', ':ttl': windowStart + 2 * windowSeconds },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return { allowed: true, count: Number(out.Attributes?.count ?? 1), resetAt };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    rememberExhausted(id, resetAt, at);
    return { allowed: false, count: quota, resetAt };
  }
}
