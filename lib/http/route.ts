import type { AccessRule } from '../data/access';
import type { RouteRow } from '../rows/row';
import { authenticate } from './authenticate';
import { type BoardAccessOptions, requireBoardMember } from './board-access';
import { type BodyOf, buildRoute, type RouteInput, type RouteResult } from './chain';
import { answerOnce } from './idempotency';
import { rateLimitSteps } from './rate-limit';

/** Rows that need an access token: every row but the public ones. */
export type ProtectedRow = RouteRow & { access: Exclude<AccessRule, { scope: 'public' }> };

/**
 * The handler of a token-protected row (its own row of lib/rows, imported by the handler so that
 * no other row is in its bundle): the chain of lib/http/chain.ts with the access token verified
 * (401) and, on board rows, membership and role checked in the spec's order; rows that create
 * something honour an Idempotency-Key. Every request is counted against its user's rate limit
 * (its address's, when the token is missing or refused). The related and preload options matter
 * only on board rows.
 */
export function route<R extends ProtectedRow, P = undefined>(
  row: R,
  handler: (input: RouteInput<R, P>) => Promise<RouteResult>,
  options: BoardAccessOptions<BodyOf<R>, P> = {},
) {
  const { access, idempotent }: RouteRow = row;
  // Rows of scope 'user' (the caller's own boards) need the token only; board rows also membership.
  const authorize = access.scope === 'board' ? requireBoardMember(access, options) : undefined;
  return buildRoute(row, handler, {
    authenticate: authenticate(row),
    authorize,
    once: idempotent ? answerOnce : undefined,
    limit: rateLimitSteps(row),
  });
}
