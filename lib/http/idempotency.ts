import { createHash } from 'node:crypto';
import { claimIdempotencyKey, recordIdempotentAnswer, releaseIdempotencyKey } from '../data/idempotency';
import { keyHash } from '../data/table';
import { functionTimeoutSeconds, type RouteRow } from '../rows/row';
import type { RouteResult } from './chain';
import { REPLAYED_HEADER, type RouteState } from './types';

/**
 * Safe retries of the POSTs that create something (rows with `idempotent`), after the IETF
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

/** Credentials are never part of a record, not even hashed: a replay must present them again. */
const CREDENTIAL_FIELDS = new Set(['password', 'refresh_token']);

/**
 * What makes a retry the same request: the operation, its path parameters and its body, as
 * validated (ids in any case are one id, fields the operation ignores change nothing), less its
 * credentials.
 */
export const fingerprintOf = (routeId: string, state: Pick<RouteState, 'params' | 'body'>) => {
  const body =
    state.body && typeof state.body === 'object'
      ? Object.fromEntries(Object.entries(state.body).filter(([name]) => !CREDENTIAL_FIELDS.has(name)))
      : (state.body ?? null);
  return createHash('sha256')
    .update(canonicalJson([routeId, state.params, body]))
    .digest('base64url');
};

/**
 * Whose key it is: the caller's, or (registration, before there is a caller) the account's the
 * body names, by the hash of its email so that no address sits in a key.
 */
function keyOwnerOf(row: RouteRow, state: RouteState): string | undefined {
  if (row.idempotent === 'caller') return state.caller?.id;
  const email = (state.body as { email?: unknown } | undefined)?.email;
  return row.idempotent === 'account' && typeof email === 'string' ? `account:${keyHash(email.toLowerCase())}` : undefined;
}

/** The claim outlives the function's own timeout, after which a crashed request's key is free again. */
const lockSecondsOf = (row: RouteRow) => functionTimeoutSeconds(row) + 5;

/**
 * What is kept of a first answer: status, body and headers (compression is chosen per retry); of
 * an answer that holds credentials, the status alone.
 */
type StoredAnswer = Pick<RouteResult, 'status' | 'body' | 'headers'>;

const replayed = (result: RouteResult): RouteResult => ({ ...result, headers: { ...result.headers, [REPLAYED_HEADER]: 'true' } });

/**
 * Runs `work` once per key: the first time for real, every retry from the record. A row whose
 * answer holds credentials (registration) runs `work(true)` on a retry: the answer made again
 * (a new login, which checks the password) with nothing created twice.
 */
export async function answerOnce(
  row: RouteRow,
  state: RouteState,
  work: (replay: boolean) => Promise<RouteResult>,
): Promise<RouteResult> {
  const owner = keyOwnerOf(row, state);
  if (state.idempotencyKey === undefined || owner === undefined) return work(false);
  const holdsCredentials = row.idempotent === 'account';
  const claim = await claimIdempotencyKey({
    userId: owner,
    key: state.idempotencyKey,
    fingerprint: fingerprintOf(row.id, state),
    lockSeconds: lockSecondsOf(row),
  });
  if (claim.replay) return replayed(holdsCredentials ? await work(true) : (JSON.parse(claim.answer) as StoredAnswer));
  let result: RouteResult;
  try {
    result = await work(false);
  } catch (error) {
    await releaseIdempotencyKey(claim.claimed);
    throw error;
  }
  if (result.status >= 400) await releaseIdempotencyKey(claim.claimed);
  else {
    const answer: StoredAnswer = holdsCredentials
      ? { status: result.status }
      : { status: result.status, body: result.body, headers: result.headers };
    await recordIdempotentAnswer(claim.claimed, JSON.stringify(answer));
  }
  return result;
}
