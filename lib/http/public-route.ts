import type { RouteRow } from '../rows/row';
import { type AccessSteps, buildRoute, type RouteInput, type RouteResult } from './chain';

/** Rows anyone may call: health, the API description, registration, login and the catch-all. */
export type PublicRow = RouteRow & { access: { scope: 'public' } };

/**
 * The handler of a public row (its own row of lib/rows): the chain of lib/http/chain.ts without
 * the token and membership steps. A separate entry point (not a flag of `route()`) so that
 * esbuild leaves the token verifier, and for rows without a table the DynamoDB client, out of
 * these functions' bundles; for the same reason a public row that honours an Idempotency-Key
 * (registration) passes the step itself (`answerOnce` of lib/http/idempotency.ts), which the type
 * then requires. The rows that take credentials are counted per client address:
 * `credentialRoute()` (lib/http/credential-route.ts) is this with the rate limit.
 */
export function publicRoute<R extends PublicRow>(
  row: R,
  handler: (input: RouteInput<R, undefined>) => Promise<RouteResult>,
  ...steps: StepsOf<R>
) {
  return buildRoute(row, handler, (steps as [AccessSteps?])[0] ?? {});
}

/** A row that honours an Idempotency-Key must be given the step (it cannot be forgotten); others may not. */
export type StepsOf<R extends PublicRow> = R extends { idempotent: string } ? [steps: Required<Pick<AccessSteps, 'once'>>] : [];
