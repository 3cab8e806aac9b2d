import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { countRequest, type RateLimitSubject } from '../data/rate-limits';
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
 * Fair use (api-contract.md "Rate limits", docs/rate-limits.md): every request of a counted row
 * (lib/rows/row.ts `rateLimitOf`) is counted once, in the table (lib/data/rate-limits.ts), against
 * its user's quota when it presents a valid token and against its source address's otherwise.
 * The count starts as soon as its subject is known and runs beside the route's first read (the
 * membership check of a board route, a GET's handler); what writes or calls Cognito waits for it.
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

export function rateLimitConfigFromEnv(): RateLimitConfig {
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
export class RateLimited extends Error {
  override name = 'RateLimited';
  constructor(readonly outcome: RateLimitOutcome) {
    super('rate limit reached');
  }
}

const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - Date.now()) / 1000));

/** The outcome with `t` fixed once for the answer: its RateLimit field and its Retry-After say the same. */
const atAnswer = (outcome: RateLimitOutcome | undefined): RateLimitOutcome | undefined =>
  outcome && { ...outcome, resetSeconds: outcome.resetSeconds };

/** The 429 problem: `code` rate_limited, Retry-After the seconds until the window resets (the field's `t`). */
export function rateLimitedResponse(outcome: RateLimitOutcome, requestId?: string): APIGatewayProxyStructuredResultV2 {
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
function startCount(quota: RateLimitQuota, subject: RateLimitSubject, routeId: string): Promise<RateLimitOutcome | undefined> {
  return countRequest(subject, quota.quota, quota.windowSeconds).then(
    ({ allowed, count, resetAt }) => ({
      ...quota,
      allowed,
      remaining: Math.max(0, quota.quota - count),
      // Answer time, not count time: what the client should wait from when it reads it.
      get resetSeconds() {
        return secondsUntil(resetAt);
      },
    }),
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
  /** Outermost of the error mapping: the fields on every answer, and the 429 of a refused request. */
  answers: RouteMiddleware;
  /** First step: starts the count of a row counted per address. */
  countAddress?: RouteMiddleware;
  /** After authentication: starts the count of the caller. */
  countUser?: RouteMiddleware;
  /** Before what the request does (writes, Cognito): waits for the count, 429 when over. */
  gate?: RouteMiddleware;
  /**
   * Instead of the gate, on a read-only route without an access read of its own (a GET of scope
   * user): its handler runs beside the count, and its answer is dropped for the 429 when over.
   */
  beside?: <T>(state: RouteState, work: () => Promise<T>) => Promise<T>;
}

const subjectAddress = (event: APIGatewayProxyEventV2) => event.requestContext?.http?.sourceIp;

export function rateLimitSteps(row: RouteRow, config: RateLimitConfig = rateLimitConfigFromEnv()): RateLimitSteps | undefined {
  const policy = rateLimitOf(row);
  if (!policy) return undefined;
  const quotaOf = (which: RateLimitPolicy): RateLimitQuota | undefined => {
    const quota = config[which];
    return quota === undefined ? undefined : { policy: which, quota, windowSeconds: config.windowSeconds };
  };
  const user = policy === 'user' ? quotaOf('user') : undefined;
  // Credential rows count per address; token rows too, when the token is missing or bad.
  const address = quotaOf('address');
  if (!user && !address) return undefined;
  // The counter is in the table, whatever the row's own use of it.
  requireEnv(ENV.tableName);
  const byAddress = (state: RouteState, event: APIGatewayProxyEventV2) => {
    const sourceIp = subjectAddress(event);
    if (!address || !sourceIp) return;
    state.rateLimit = startCount(address, { policy: 'address', address: sourceIp }, row.id);
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
        // A token route refused at authentication: the request counts against its address.
        if (state && !state.rateLimit && policy === 'user' && error instanceof Unauthorized) byAddress(state, event);
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
      policy === 'user' && user
        ? {
            before: ({ context }) => {
              context.route.rateLimit = startCount(user, { policy: 'user', userId: context.route.caller!.id }, row.id);
            },
          }
        : undefined,
    ...(row.method === 'GET' && row.access.scope === 'user'
      ? { beside: besideCount }
      : { gate: { before: ({ context }) => gateOf(context.route) } }),
  };
}

/** Runs a `beside` row's handler and its count together: the count's 429 wins over whatever the handler did. */
async function besideCount<T>(state: RouteState, work: () => Promise<T>): Promise<T> {
  const [count, result] = await Promise.allSettled([state.rateLimit, work()]);
  const outcome = count.status === 'fulfilled' ? count.value : undefined;
  if (outcome && !outcome.allowed) throw new RateLimited(outcome);
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}
