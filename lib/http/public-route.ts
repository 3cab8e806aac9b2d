import type { RouteId, Routes } from '../routes';
import { type AccessSteps, buildRoute, type RouteInput, type RouteResult } from './chain';

/** Rows anyone may call: health, the API description, registration, login and the catch-all. */
export type PublicRouteId = { [Id in RouteId]: Routes[Id]['access'] extends { scope: 'public' } ? Id : never }[RouteId];

/**
 * The handler of a public row: the chain of lib/http/chain.ts without the token and membership
 * steps. A separate entry point (not a flag of `route()`) so that esbuild leaves the token
 * verifier, and for rows without a table the DynamoDB client, out of these functions' bundles;
 * for the same reason a public row that honours an Idempotency-Key (registration) passes the
 * step itself (`answerOnce` of lib/http/idempotency.ts), which the type then requires.
 */
export function publicRoute<Id extends PublicRouteId>(
  id: Id,
  handler: (input: RouteInput<Id, undefined>) => Promise<RouteResult>,
  ...[steps]: StepsOf<Id>
) {
  return buildRoute(id, handler, steps ?? {});
}

/** A row that honours an Idempotency-Key must be given the step (it cannot be forgotten); others may not. */
type StepsOf<Id extends PublicRouteId> = Routes[Id] extends { idempotent: string }
  ? [steps: Required<Pick<AccessSteps, 'once'>>]
  : [];
