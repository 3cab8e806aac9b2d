import type { RouteId, Routes } from '../routes';
import { type AccessSteps, buildRoute, type RouteInput, type RouteResult } from './chain';

/** Rows anyone may call: health, the API description, registration, login and the catch-all. */
export type PublicRouteId = { [Id in RouteId]: Routes[Id]['access'] extends { scope: 'public' } ? Id : never }[RouteId];

/**
 * The handler of a public row: the chain of lib/http/chain.ts without the token and membership
 * steps. A separate entry point (not a flag of `route()`) so that esbuild leaves the token
 * verifier, and for rows without a table the DynamoDB client, out of these functions' bundles;
 * for the same reason a public row that honours an Idempotency-Key (registration) passes the
 * step itself (`answerOnce` of lib/http/idempotency.ts).
 */
export function publicRoute<Id extends PublicRouteId>(
  id: Id,
  handler: (input: RouteInput<Id, undefined>) => Promise<RouteResult>,
  steps: Pick<AccessSteps, 'once'> = {},
) {
  return buildRoute(id, handler, steps);
}
