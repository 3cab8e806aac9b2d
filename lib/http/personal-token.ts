import type { Caller } from '../auth/verifier';
import { findPersonalToken, recordPersonalTokenUse } from '../data/personal-token-lookup';
import { InsufficientScope, Unauthorized } from '../domain/errors';
import { isWellFormedPersonalToken } from '../domain/personal-tokens';
import { createsBoard, personalTokenScopeOf, type RouteRow } from '../rows/row';
import { logger } from '../runtime/logger';
import type { RouteState } from './types';

/**
 * A request with a personal access token (docs/tokens.md): run by lib/http/authenticate.ts only
 * when the bearer token starts with `tbp_`, so that a request with a session token runs none of it
 * (nothing here or in lib/data/personal-token-lookup.ts runs when the bundle is loaded). Its checks, in the contract's order: the token itself (401 as for a refused session token: a
 * malformed one or a wrong checksum without any read, an unknown, deleted or expired one after the
 * one read of its item), then the route's scope (403 `insufficient_scope`), before input checks.
 * The token's text goes nowhere: not in a log line, an error or the state; only its id does.
 */
const PERSONAL_TOKEN_REFUSED = 'The access token is invalid or has expired.';

export async function authenticatePersonalToken(token: string, row: RouteRow, state: RouteState): Promise<void> {
  if (!isWellFormedPersonalToken(token)) {
    logger.debug('personal access token refused', { reason: 'not a token this service issues (shape or checksum)' });
    throw new Unauthorized(PERSONAL_TOKEN_REFUSED, true);
  }
  const found = await findPersonalToken(token);
  if (!found) {
    logger.debug('personal access token refused', { reason: 'unknown, deleted or expired' });
    throw new Unauthorized(PERSONAL_TOKEN_REFUSED, true);
  }
  const { grant } = found;
  // The user is the caller from here on, so a refusal below counts against the user's quota.
  const caller: Caller = { id: found.userId, expiresAt: found.expiresAt, token: '', personal: grant };
  state.caller = caller;
  // Beside the request's own work; the chain awaits it before answering (authenticate's after).
  state.personalTokenUse = recordPersonalTokenUse(found.hash, found.lastUsedAt, (error) =>
    logger.warn('personal access token use not recorded', { tokenId: grant.tokenId, error }),
  );
  const needed = personalTokenScopeOf(row);
  if (!needed || (createsBoard(row) && grant.boardIds)) throw new InsufficientScope(undefined);
  if (!grant.scopes.includes(needed)) throw new InsufficientScope(needed);
}
