import { INVALID_TOKEN, verifyAccessToken } from '../auth/verifier';
import { Unauthorized } from '../domain/errors';
import { isPersonalTokenText } from '../domain/personal-tokens';
import type { RouteRow } from '../rows/row';
import { authenticatePersonalToken } from './personal-token';
import type { RouteMiddleware, RouteState } from './types';

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/;

/** Waits for a personal token's use to be recorded (it never rejects): the answer leaves after it. */
const usesRecorded = async ({ context }: { context: { route?: RouteState } }) => {
  await context.route?.personalTokenUse;
};

/**
 * A valid Cognito access token, or a personal access token allowed on `row` (401 otherwise; 403
 * `insufficient_scope` for a personal token outside its scopes); route() puts this step on every
 * non-public row. A personal token is told by its prefix before anything is verified: a request
 * with a session token runs none of its code and makes no call because personal tokens exist.
 * Its modules are imported statically, and run nothing when loaded (about 3 KB of a bundle): an
 * `await import()` of them made esbuild wrap their whole graph, the DynamoDB client's included,
 * in lazily initialised modules that it can no longer tree-shake (57 KB more in every token
 * function, and a slower cold import: docs/tokens.md).
 */
export function authenticate(row: RouteRow): RouteMiddleware {
  return {
    after: usesRecorded,
    onError: usesRecorded,
    before: async ({ event, context }) => {
      const header = event.headers?.authorization?.trim();
      if (!header) throw new Unauthorized('An access token is required: send Authorization: Bearer <token>.', false);
      // A bare credential without a scheme is a token sent wrongly: reject it as a token.
      if (!/\s/.test(header)) throw new Unauthorized(INVALID_TOKEN, true);
      // Another scheme (Basic, ...) presents no bearer token: RFC 6750 gives it no error code.
      if (!/^bearer\s/i.test(header)) {
        throw new Unauthorized('An access token is required: send Authorization: Bearer <token>.', false);
      }
      // The scheme must be written `Bearer` exactly (the contract's header, case and all): `bearer x` is a rejected token.
      const token = BEARER.exec(header)?.[1];
      if (!token) throw new Unauthorized(INVALID_TOKEN, true);
      // A value returned by a middy `before` would end the request: nothing is returned here.
      if (isPersonalTokenText(token)) {
        await authenticatePersonalToken(token, row, context.route);
        return;
      }
      context.route.caller = await verifyAccessToken(token);
    },
  };
}
