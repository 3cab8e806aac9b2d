import { FetchError } from 'aws-jwt-verify/error';
import { assertIsJwks, type Jwks } from 'aws-jwt-verify/jwk';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import { Unauthorized, Unavailable } from '../domain/errors';
import { MAX_TOKEN_LENGTH } from '../domain/limits';
import type { PersonalTokenGrant } from '../domain/personal-tokens';
import { ENV, requireEnv } from '../runtime/config';
import { logger } from '../runtime/logger';

/**
 * Verifies Cognito access tokens: signature against the pool's JWKS, issuer, expiry,
 * `token_use = access` and the app client. Built once per container so the JWKS is fetched once.
 * The issuer comes from configuration (CDK sets the pool's provider URL), which is what lets the
 * local Cognito emulator, whose issuer is not a cognito-idp URL, use the very same code.
 *
 * aws-jwt-verify fetches a JWKS over https only, and the emulator serves http; so for an http://
 * issuer the keys come in TOKEN_JWKS instead (the local stack sets it in its own process and in
 * local-env.json, and `npm run sam:env -- local` passes it to SAM's containers). TOKEN_JWKS with
 * an https:// issuer stops the cold start: a deployed function always fetches its pool's keys.
 */
const issuer = requireEnv(ENV.tokenIssuer);
const CLOCK_SKEW_SECONDS = 60;
/** Cognito access tokens live at most one day. */
const MAX_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;
const clientId = requireEnv(ENV.userPoolClientId);

export const accessTokenVerifier = JwtVerifier.create({
  issuer,
  audience: null, // access tokens carry client_id instead of aud; checked below
  jwksUri: `${issuer}/.well-known/jwks.json`,
  customJwtCheck: ({ payload }) => {
    if (payload.token_use !== 'access') throw new Error('token_use is not access');
    if (payload.client_id !== clientId) throw new Error('token issued to another app client');
    if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw new Error('token has no subject');
    if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number') throw new Error('token has no expiry or issue time');
    // Cognito access tokens carry no nbf: one issued in the future is not yet valid.
    if (payload.iat > Date.now() / 1000 + CLOCK_SKEW_SECONDS) throw new Error('token issued in the future');
    if (payload.exp - payload.iat > MAX_TOKEN_LIFETIME_SECONDS) throw new Error('token lives longer than Cognito allows');
  },
});

/** The keys TOKEN_JWKS hands over, checked at cold start; undefined when it is unset. */
function jwksFromEnv(issuerUrl: string, value: string | undefined): Jwks | undefined {
  if (value === undefined || value === '') return undefined;
  if (!issuerUrl.startsWith('http://')) {
    throw new Error(`${ENV.tokenJwks} is only for a local http:// issuer; ${issuerUrl}'s keys are fetched over https`);
  }
  try {
    const jwks = JSON.parse(value) as Parameters<typeof assertIsJwks>[0];
    assertIsJwks(jwks);
    return jwks;
  } catch (error) {
    throw new Error(`${ENV.tokenJwks} must be the pool's JWKS as JSON ({"keys":[…]}): ${(error as Error).message}`);
  }
}

const handedOver = jwksFromEnv(issuer, process.env[ENV.tokenJwks]);
if (handedOver) accessTokenVerifier.cacheJwks(handedOver);

export interface Caller {
  id: string;
  /** Seconds since the epoch at which the token stops being accepted. */
  expiresAt: number;
  /**
   * The verified access token itself, for Cognito's own token-authorized calls (lib/auth/cognito.ts);
   * empty for a personal access token, which reaches none of the routes that make such calls.
   */
  token: string;
  /** Set when the request came with a personal access token: its id, scopes and boards (docs/tokens.md). */
  personal?: PersonalTokenGrant;
  /**
   * Seconds since the epoch at which Cognito issued the access token (its `iat`); absent for a
   * personal access token. Minting a personal token requires a session issued after the
   * password's last change (lib/data/personal-tokens.ts).
   */
  issuedAt?: number;
}

/** One detail for every rejected token, so a 401 says nothing about why. */
export const INVALID_TOKEN = 'The access token is invalid or has expired.';

/** Every verification failure is the same 401 to the client; only a JWKS outage is a 503. */
export async function verifyAccessToken(token: string): Promise<Caller> {
  if (token.length > MAX_TOKEN_LENGTH) {
    logger.debug('access token refused', { reason: `longer than ${MAX_TOKEN_LENGTH} characters` });
    throw new Unauthorized(INVALID_TOKEN, true);
  }
  try {
    const payload = await accessTokenVerifier.verify(token);
    return { id: payload.sub as string, expiresAt: payload.exp as number, token, issuedAt: payload.iat as number };
  } catch (error) {
    // Why, for whoever runs it (the client hears only INVALID_TOKEN); never the token itself.
    const { message } = error as Error;
    if (error instanceof FetchError) {
      logger.warn('token signing keys could not be fetched', { reason: message });
      throw new Unavailable('The token signing keys could not be fetched.');
    }
    // aws-jwt-verify's messages name the failed check ("Invalid signature", "Token expired at …").
    logger.debug('access token refused', { reason: message, ...hintFor(error) });
    throw new Unauthorized(INVALID_TOKEN, true);
  }
}

/** What to do about a refusal that is the setup's, not the token's. */
function hintFor(error: unknown): { hint?: string } {
  if ((error as NodeJS.ErrnoException).code === 'ERR_INVALID_PROTOCOL') {
    return { hint: `the JWKS at ${issuer} is not https: hand its keys over in ${ENV.tokenJwks} (npm run sam:env -- local does)` };
  }
  return {};
}
