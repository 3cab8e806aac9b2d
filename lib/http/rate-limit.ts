import { AsyncLocalStorage } from 'node:async_hooks';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { countRequest, FoldedCount, type RateLimitCount, type RateLimitSubject, usedUpHere } from '../data/rate-limits';
import { Unauthorized } from '../domain/errors';
import { type RateLimitPolicy, type RouteRow, rateLimitOf } from '../rows/row';
import { ENV, type EnvName, requireEnv, secondsFromEnv } from '../runtime/config';
import { logger } from '../runtime/logger';
import { emitMetric, SERVICE } from '../runtime/metrics';
import { PROBLEM_CONTENT_TYPE } from './problem';
import {
  RATE_LIMIT_FAIL_OPEN_METRIC,
  RATE_LIMITED_METRIC,
  type RateLimitQuota,
  type RateLimitState,
  rateLimitFields,
} from './rate-limit-fields';
import { type RouteMiddleware, type RouteState, requestIdOf } from './types';

/**
 * Fair use (docs/rate-limits.md): every request of a counted row
 * (lib/rows/row.ts `rateLimitOf`) is counted once, in the table (lib/data/rate-limits.ts), against
 * its user's quota when it presents a valid token and against its source address's otherwise.
 * The count starts as soon as its subject is known and runs beside the route's first read (the
 * membership check of a board route, a GET's handler, login's InitiateAuth), or is one more item
 * of the route's first write (POST /boards, POST /realtime/tickets: the row's `rateLimitPlacement`);
 * only what has neither waits for it.
 * Over the quota: 429 `rate_limited` with Retry-After, and nothing done. Every counted answer
 * carries RateLimit-Policy and RateLimit. When the store fails, the request goes on uncounted
 * (fail open) and the metric RateLimitFailOpen says so.
 */

/** The quotas this function was configured with (read once, at cold start); a policy without a quota is off. */
export interface RateLimitConfig {
  user?: number;
  address?: number;
  windowSeconds: number;
}

function quotaFromEnv(name: EnvName): number | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const quota = Number(value);
  if (!Number.isInteger(quota) || quota <= 0) throw new Error(`${name} must be a positive whole number, not ${value}`);
  return quota;
}

function rateLimitConfigFromEnv(): RateLimitConfig {
  return {
    user: quotaFromEnv(ENV.rateLimitRequests),
    address: quotaFromEnv(ENV.authRateLimitRequests),
    windowSeconds: secondsFromEnv(ENV.rateLimitWindowSeconds, 60),
  };
}

/** How a counted request stands, once its count is in; undefined: not counted (fail open, or no quota). */
export interface RateLimitOutcome extends RateLimitState {
  allowed: boolean;
}

/** Over the quota: answered 429 by `rateLimitAnswers`, never by the generic problem mapping. */
class RateLimited extends Error {
  override name = 'RateLimited';
  constructor(readonly outcome: RateLimitOutcome) {
    super('rate limit reached');
  }
}

const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - Date.now()) / 1000));

export type RateLimitPlacement = NonNullable<RouteRow['rateLimitPlacement']> | 'gate';

/**
 * Where a row's count goes (undefined: the row is not counted): its row's `rateLimitPlacement`
 * (lib/rows/row.ts says what each means), else `beside` for a GET of scope user and `gate` for
 * the rest. The one rule the chain and the cost model (bench/cost.ts) read.
 */
export function rateLimitPlacementOf(row: RouteRow): RateLimitPlacement | undefined {
  if (!rateLimitOf(row)) return undefined;
  return row.rateLimitPlacement ?? (row.method === 'GET' && row.access.scope === 'user' ? 'beside' : 'gate');
}

/**
 * The sequential round trips a row's count adds: 1 behind the gate where nothing is read before
 * it (registration, verify-email request, logout: lib/rows/row.ts `rateLimitPlacement` says why);
 * 0 everywhere else (a board row's gate comes after its membership read, which the count runs
 * beside; `fold`, `beside`, `inside`).
 */
export function rateLimitRoundTripsOf(row: RouteRow): 0 | 1 {
  return rateLimitPlacementOf(row) === 'gate' && row.access.scope !== 'board' ? 1 : 0;
}

/** The gate an `inside` row's handler awaits before its first change, for the request being handled. */
const gates = new AsyncLocalStorage<() => Promise<void>>();
const open = async () => {};

/**
 * What the handler of an `inside` row awaits after its first read and before its first change:
 * the request's count, and RateLimited (429) when over the quota. Resolves at once where the
 * request is not counted this way (no quota, or another placement).
 */
export const countGate = (): (() => Promise<void>) => gates.getStore() ?? open;

/** The count a `fold` row's handler puts in its transaction, for the request being handled. */
const heldCounts = new AsyncLocalStorage<FoldedCount>();

/**
 * The rate limiter's count for the handler of a `fold` row to pass to its transaction
 * (lib/data/boards.ts `createBoard`, lib/data/sockets.ts `issueTicket`); undefined when the
 * request is not counted this way (no quota, or counted already: a request with an
 * Idempotency-Key, whose claim is its first write).
 */
export const heldCount = (): FoldedCount | undefined => heldCounts.getStore();

/** A count as the answer's outcome: `t` is computed when the answer is made. */
function outcomeOf(quota: RateLimitQuota, { allowed, count, resetAt }: RateLimitCount): RateLimitOutcome {
  return {
    ...quota,
    allowed,
    remaining: Math.max(0, quota.quota - count),
    // Answer time, not count time: what the client should wait from when it reads it.
    get resetSeconds() {
      return secondsUntil(resetAt);
    },
  };
}

/** The outcome with `t` fixed once for the answer: its RateLimit field and its Retry-After say the same. */
const atAnswer = (outcome: RateLimitOutcome | undefined): RateLimitOutcome | undefined =>
  outcome && { ...outcome, resetSeconds: outcome.resetSeconds };

/** The 429 problem: `code` rate_limited, Retry-After the seconds until the window resets (the field's `t`). */
function rateLimitedResponse(outcome: RateLimitOutcome, requestId?: string): APIGatewayProxyStructuredResultV2 {
  const who = outcome.policy === 'user' ? 'your account' : 'your address';
  const body = {
    type: 'about:blank',
    title: 'Too Many Requests',
    status: 429,
    detail: `Too many requests from ${who}: ${outcome.quota} per ${outcome.windowSeconds} s. Retry after ${outcome.resetSeconds} s.`,
    code: 'rate_limited',
    ...(requestId ? { instance: `urn:request:${requestId}` } : {}),
  };
  return {
    statusCode: 429,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, 'retry-after': String(outcome.resetSeconds) },
    body: JSON.stringify(body),
  };
}

/**
 * Counts one request, never rejecting: a store failure is logged, counted in the metric and
 * resolves undefined, and the request goes on uncounted.
 */
function startCount(
  quota: RateLimitQuota,
  subject: RateLimitSubject,
  routeId: string,
  cost = 1,
): Promise<RateLimitOutcome | undefined> {
  return countRequest(subject, quota.quota, quota.windowSeconds, Date.now(), cost).then(
    (count) => outcomeOf(quota, count),
    (error: unknown) => {
      logger.warn('rate limit not counted', { route: routeId, policy: quota.policy, error });
      emitMetric(RATE_LIMIT_FAIL_OPEN_METRIC, { service: SERVICE });
      return undefined;
    },
  );
}

/**
 * The steps the chain (lib/http/chain.ts) puts around a counted row; undefined for rows not
 * counted or without a quota. `route()` and `credentialRoute()` pass them: `publicRoute()` does
 * not, so that the uncounted public functions' bundles stay without the table client.
 */
export interface RateLimitSteps {
  /**
   * Outermost of the error mapping: the fields on every answer, and the 429 of a refused request;
   * counts a request refused before the step that would have counted it.
   */
  answers: RouteMiddleware;
  /** First step: starts the count of a row counted per address. */
  countAddress?: RouteMiddleware;
  /** After authentication: starts the count of the caller. */
  countUser?: RouteMiddleware;
  /** Before what the request does (writes, Cognito): waits for the count, 429 when over. */
  gate?: RouteMiddleware;
  /**
   * Instead of the gate, around the handler: on a row without an access read of its own whose
   * handler changes nothing (a GET of scope user, login), the handler runs beside the count and
   * its answer is dropped for the 429 when over; on a `fold` row, the count is made in the
   * handler's own transaction.
   */
  beside?: <T>(state: RouteState, work: () => Promise<T>) => Promise<T>;
}

const subjectAddress = (event: APIGatewayProxyEventV2) => event.requestContext?.http?.sourceIp;

/**
 * Requests this instance refused from memory (their window was already refused here), before any
 * call: a `beside` row's handler is then not run at all, so a loop over its quota against a warm
 * login function does not reach Cognito.
 */
const refusedHere = new WeakSet<RouteState>();

/** Starts the count of one request, or refuses it at once when this instance remembers its window refused. */
function beginCount(state: RouteState, quota: RateLimitQuota, subject: RateLimitSubject, routeId: string): void {
  const known = usedUpHere(subject, quota.quota, quota.windowSeconds);
  if (known) refusedHere.add(state);
  state.rateLimit = known ? Promise.resolve(outcomeOf(quota, known)) : startCount(quota, subject, routeId);
}

export function rateLimitSteps(row: RouteRow, config: RateLimitConfig = rateLimitConfigFromEnv()): RateLimitSteps | undefined {
  const policy = rateLimitOf(row);
  if (!policy) return undefined;
  const quotaOf = (which: RateLimitPolicy): RateLimitQuota | undefined => {
    const quota = config[which];
    return quota === undefined ? undefined : { policy: which, quota, windowSeconds: config.windowSeconds };
  };
  const user = policy === 'user' ? quotaOf('user') : undefined;
  const placement = rateLimitPlacementOf(row)!;
  // Credential rows count per address; token rows too, when the token is missing or bad.
  const address = quotaOf('address');
  if (!user && !address) return undefined;
  // The counter is in the table, whatever the row's own use of it.
  requireEnv(ENV.tableName);
  const byAddress = (state: RouteState, event: APIGatewayProxyEventV2) => {
    const sourceIp = subjectAddress(event);
    if (!address || !sourceIp) return;
    beginCount(state, address, { policy: 'address', address: sourceIp }, row.id);
  };
  const gateOf = async (state: RouteState) => {
    const outcome = await state.rateLimit;
    if (outcome && !outcome.allowed) throw new RateLimited(outcome);
  };
  return {
    answers: {
      after: async ({ context, response }) => {
        const outcome = atAnswer(await context.route.rateLimit);
        if (outcome && response) response.headers = { ...response.headers, ...rateLimitFields(outcome) };
      },
      onError: async (request) => {
        const { context, event, error } = request;
        const state = context.route;
        // Refused before its count was placed (a `fold` row's count is in its handler's
        // transaction, so a 400, 413 or 415 of its body, parameters or Idempotency-Key never
        // reached it): counted now, as every request is. A token route refused at
        // authentication counts against its address.
        if (state && !state.rateLimit && policy === 'user') {
          if (user && state.caller) beginCount(state, user, { policy: 'user', userId: state.caller.id }, row.id);
          else if (error instanceof Unauthorized) byAddress(state, event);
        }
        const outcome = atAnswer(await state?.rateLimit);
        if (!outcome) return;
        // Over the quota, the 429 is the answer whatever else failed (the request did nothing).
        if (!outcome.allowed) request.response = rateLimitedResponse(outcome, requestIdOf(event));
        if (request.response) request.response.headers = { ...request.response.headers, ...rateLimitFields(outcome) };
        if (!outcome.allowed) emitMetric(RATE_LIMITED_METRIC, { service: SERVICE });
      },
    },
    countAddress: policy === 'address' ? { before: ({ context, event }) => byAddress(context.route, event) } : undefined,
    countUser:
      policy === 'user' && user && placement !== 'fold'
        ? {
            before: ({ context }) => {
              beginCount(context.route, user, { policy: 'user', userId: context.route.caller!.id }, row.id);
            },
          }
        : undefined,
    ...(placement === 'fold'
      ? { beside: <T>(state: RouteState, work: () => Promise<T>) => foldCount(row.id, user, state, work, costOf(row, state)) }
      : placement === 'beside'
        ? { beside: besideCount }
        : placement === 'inside'
          ? {
              beside: <T>(state: RouteState, work: () => Promise<T>) =>
                gates.run(
                  () => gateOf(state),
                  () => besideCount(state, work),
                ),
            }
          : { gate: { before: ({ context }) => gateOf(context.route) } }),
  };
}

/** What a request counts as: one, or (a row whose `rateLimitCost` says so) its body's operations. */
function costOf(row: RouteRow, state: RouteState): number {
  if (row.rateLimitCost !== 'operations') return 1;
  const operations = (state.body as { operations?: unknown } | undefined)?.operations;
  return Array.isArray(operations) && operations.length > 0 ? operations.length : 1;
}

/**
 * A request refused for its cost alone (fewer left than it counts as, yet some left): it is
 * counted as one, as every refused request is, and answered 429 whatever that count says.
 */
async function refusedWhole(quota: RateLimitQuota, subject: RateLimitSubject, routeId: string, resetAt: number) {
  const one = await startCount(quota, subject, routeId);
  return { ...(one ?? outcomeOf(quota, { allowed: false, count: quota.quota, resetAt })), allowed: false };
}

/**
 * A `fold` row's handler with its count in its own transaction (`heldCount()`): no round trip
 * before it, and a refused request cancels the transaction, so it writes nothing. A request the
 * transaction did not count (it failed for another reason, or the handler never sent it) is
 * counted on its own afterwards, so that every request counts; one with an Idempotency-Key is
 * counted first, as behind the gate: the key's claim is its first write.
 */
async function foldCount<T>(
  routeId: string,
  quota: RateLimitQuota | undefined,
  state: RouteState,
  work: () => Promise<T>,
  cost = 1,
): Promise<T> {
  if (!quota) return work();
  const subject: RateLimitSubject = { policy: 'user', userId: state.caller!.id };
  if (state.idempotencyKey !== undefined) {
    state.rateLimit = startCount(quota, subject, routeId, cost).then(async (outcome) =>
      outcome && !outcome.allowed && cost > 1
        ? refusedWhole(quota, subject, routeId, Date.now() + outcome.resetSeconds * 1000)
        : outcome,
    );
    const outcome = await state.rateLimit;
    if (outcome && !outcome.allowed) throw new RateLimited(outcome);
    return work();
  }
  const folded = new FoldedCount(subject, quota.quota, quota.windowSeconds, Date.now(), cost);
  let settle!: (outcome: RateLimitOutcome | undefined) => void;
  state.rateLimit = new Promise((resolve) => {
    settle = resolve;
  });
  let outcome: RateLimitOutcome | undefined;
  try {
    const [done] = await Promise.allSettled([heldCounts.run(folded, work)]);
    const counted = await folded.result();
    if (counted.counted) {
      outcome = counted.count && outcomeOf(quota, counted.count);
      // Served and counted, but the read beside the transaction failed: no fields (as failing open).
      if (!counted.count) logger.warn('rate limit counted, fields unknown', { route: routeId, error: folded.readError });
    } else if (folded.refusedWhole) {
      outcome = await refusedWhole(quota, subject, routeId, folded.resetAt);
    } else {
      if (done.status === 'fulfilled') logger.error('a fold row answered without its count', { route: routeId });
      outcome = await startCount(quota, subject, routeId);
    }
    // Over the quota the 429 wins, as behind the gate (a refused transaction wrote nothing).
    if (outcome && !outcome.allowed) throw new RateLimited(outcome);
    if (done.status === 'rejected') throw done.reason;
    return done.value;
  } finally {
    settle(outcome);
  }
}

/** Runs a `beside` row's handler and its count together: the count's 429 wins over whatever the handler did. */
async function besideCount<T>(state: RouteState, work: () => Promise<T>): Promise<T> {
  if (refusedHere.has(state)) throw new RateLimited((await state.rateLimit)!);
  const [count, result] = await Promise.allSettled([state.rateLimit, work()]);
  const outcome = count.status === 'fulfilled' ? count.value : undefined;
  if (outcome && !outcome.allowed) throw new RateLimited(outcome);
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}
