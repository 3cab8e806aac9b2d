import { createHash } from 'node:crypto';
import { claimIdempotencyKey, recordIdempotentAnswer, releaseIdempotencyKey } from '../data/idempotency';
import { functionTimeoutSeconds, type RouteRow } from '../routes';
import type { RouteResult } from './chain';
import { REPLAYED_HEADER, type RouteState } from './types';

/**
 * Safe retries of the POSTs that create something (rows with `idempotent: true`), after the IETF
 * draft "The Idempotency-Key HTTP Header Field": the same key with the same request within 24
 * hours gets the first answer again, marked `Idempotent-Replayed: true`, without the work being
 * done twice; the same key with another request is 422; while the first is still running, 409.
 * A request without the header is untouched: no record, no extra round trip.
 */

/** JSON with object keys sorted: two bodies that differ only in key order or spacing are one request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What makes a retry the same request: the operation, its path parameters and its body, as
 * validated (ids in any case are one id, fields the operation ignores change nothing).
 */
export const fingerprintOf = (routeId: string, state: Pick<RouteState, 'params' | 'body'>) =>
  createHash('sha256')
    .update(canonicalJson([routeId, state.params, state.body ?? null]))
    .digest('base64url');

/** The claim outlives the function's own timeout, after which a crashed request's key is free again. */
const lockSecondsOf = (row: RouteRow) => functionTimeoutSeconds(row) + 5;

/** What is kept of a first answer: status, body and headers; compression is chosen per retry. */
type StoredAnswer = Pick<RouteResult, 'status' | 'body' | 'headers'>;

/** Runs `work` once per key: the first time for real, every retry from the record. */
export async function answerOnce(
  routeId: string,
  row: RouteRow,
  state: RouteState,
  work: () => Promise<RouteResult>,
): Promise<RouteResult> {
  if (state.idempotencyKey === undefined || !state.caller) return work();
  const claim = await claimIdempotencyKey({
    userId: state.caller.id,
    key: state.idempotencyKey,
    fingerprint: fingerprintOf(routeId, state),
    lockSeconds: lockSecondsOf(row),
  });
  if (claim.replay) {
    const answer = JSON.parse(claim.answer) as StoredAnswer;
    return { ...answer, headers: { ...answer.headers, [REPLAYED_HEADER]: 'true' } };
  }
  let result: RouteResult;
  try {
    result = await work();
  } catch (error) {
    await releaseIdempotencyKey(claim.claimed);
    throw error;
  }
  if (result.status >= 400) await releaseIdempotencyKey(claim.claimed);
  else {
    const answer: StoredAnswer = { status: result.status, body: result.body, headers: result.headers };
    await recordIdempotentAnswer(claim.claimed, JSON.stringify(answer));
  }
  return result;
}
