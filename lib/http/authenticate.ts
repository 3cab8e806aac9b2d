import { INVALID_TOKEN, verifyAccessToken } from '../auth/verifier';
import { Unauthorized } from '../domain/errors';
import type { RouteMiddleware } from './types';

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/;

/** A valid Cognito access token (401 otherwise); route() puts this step on every non-public row. */
export function authenticate(): RouteMiddleware {
  return {
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
      context.route.caller = await verifyAccessToken(token);
    },
  };
}
