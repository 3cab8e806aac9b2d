import { type RouteId, type RouteRow, type Routes, routes } from '../routes';
import { authenticate } from './authenticate';
import { type BoardAccessOptions, requireBoardMember } from './board-access';
import { type BodyOf, buildRoute, type RouteInput, type RouteResult } from './chain';
import { answerOnce } from './idempotency';

/** Rows that need an access token: every row but the public ones. */
export type ProtectedRouteId = { [Id in RouteId]: Routes[Id]['access'] extends { scope: 'public' } ? never : Id }[RouteId];

/**
 * The handler of a token-protected row: the chain of lib/http/chain.ts with the access token
 * verified (401) and, on board rows, membership and role checked in the spec's order; rows that
 * create something honour an Idempotency-Key. The related and preload options matter only on
 * board rows.
 */
export function route<Id extends ProtectedRouteId, P = undefined>(
  id: Id,
  handler: (input: RouteInput<Id, P>) => Promise<RouteResult>,
  options: BoardAccessOptions<BodyOf<Id>, P> = {},
) {
  const { access, idempotent }: RouteRow = routes[id];
  // Rows of scope 'user' (the caller's own boards) need the token only; board rows also membership.
  const authorize = access.scope === 'board' ? requireBoardMember(access, options) : undefined;
  return buildRoute(id, handler, { authenticate: authenticate(), authorize, once: idempotent ? answerOnce : undefined });
}
