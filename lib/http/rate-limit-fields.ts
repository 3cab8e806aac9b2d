import type { RateLimitPolicy } from '../rows/row';

/**
 * The pure parts of the rate limits (docs/rate-limits.md): the fields of the IETF
 * RateLimit header draft (draft-ietf-httpapi-ratelimit-headers) in Structured Field syntax, and the
 * metric the limiter counts when its store cannot answer. Importing this module costs nothing:
 * OpenAPI, CDK (the alarm) and the middleware (lib/http/rate-limit.ts) share it.
 */

/** CloudWatch metric (namespace TaskBoard, dimension `service`) of requests served uncounted. */
export const RATE_LIMIT_FAIL_OPEN_METRIC = 'RateLimitFailOpen';
/** CloudWatch metric of requests refused with 429 (either policy). */
export const RATE_LIMITED_METRIC = 'RateLimited';

const RATE_LIMIT_POLICY_HEADER = 'ratelimit-policy';
const RATE_LIMIT_HEADER = 'ratelimit';

/** A policy's quota and window, as the function was configured. */
export interface RateLimitQuota {
  policy: RateLimitPolicy;
  quota: number;
  windowSeconds: number;
}

/** Where a request stands in its window once counted. */
export interface RateLimitState extends RateLimitQuota {
  /** Requests left in the window after this one (0 on a refusal). */
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
}

/** `RateLimit-Policy: "user";q=600;w=60` and `RateLimit: "user";r=599;t=42`. */
export function rateLimitFields(state: RateLimitState): Record<string, string> {
  return {
    [RATE_LIMIT_POLICY_HEADER]: `"${state.policy}";q=${state.quota};w=${state.windowSeconds}`,
    [RATE_LIMIT_HEADER]: `"${state.policy}";r=${state.remaining};t=${state.resetSeconds}`,
  };
}
