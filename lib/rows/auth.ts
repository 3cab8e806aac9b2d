import { loginBody, refreshBody, registerBody } from '../contract/schemas';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/** Accounts and tokens: public rows (the body holds the credential), throttled at the identity rate. */

export const authRegister = {
  id: 'auth.register',
  method: 'POST',
  path: '/auth/register',
  throttle: 'identity',
  entry: 'functions/auth/register.ts',
  logGroup: 'root',
  summary: 'Register a user and receive an access token',
  access: { scope: 'public' },
  body: registerBody,
  success: { status: 201, schema: 'tokenResponse' },
  idempotent: 'account',
  // BatchGetItem and DeleteItem only when the address is held by an account whose identity is gone.
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem'],
  errors: [409],
  metric: 'UserRegistered',
  cognito: [
    'cognito-idp:AdminCreateUser',
    'cognito-idp:AdminSetUserPassword',
    'cognito-idp:AdminDeleteUser',
    'cognito-idp:AdminGetUser',
    'cognito-idp:AdminInitiateAuth',
    'cognito-idp:DescribeUserPoolClient',
  ],
} satisfies RouteRow;

export const authRegisterText = {
  of: authRegister,
  tag: 'auth',
  description:
    'Creates a user in the Cognito user pool (confirmed at once) and answers with an access token, as login would. The email must not be registered yet (409).',
  // A credential route's 401 says what was refused (lib/auth/cognito.ts), not the access token's text.
  problems: () => ({ 401: { code: 'unauthorized', detail: 'The email or password is wrong.' } }),
} satisfies RouteText;

export const authLogin = {
  id: 'auth.login',
  method: 'POST',
  path: '/auth/login',
  throttle: 'identity',
  entry: 'functions/auth/login.ts',
  logGroup: 'root',
  summary: 'Log in with email and password',
  access: { scope: 'public' },
  // InitiateAuth only answers tokens: nothing changed that a refusal would have to undo.
  rateLimitPlacement: 'beside',
  body: loginBody,
  success: { status: 200, schema: 'tokenResponse' },
  table: [],
  errors: [401],
  cognito: ['cognito-idp:AdminInitiateAuth', 'cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authLoginText = {
  of: authLogin,
  tag: 'auth',
  description:
    'Exchanges email and password for a Cognito access token. A wrong email or password gets the same 401, so accounts cannot be enumerated; an address that is not one, or a password outside 8 to 256 characters, is 400 on its shape alone, as at registration.',
  // A credential route's 401 says what was refused (lib/auth/cognito.ts), not the access token's text.
  problems: () => ({ 401: { code: 'unauthorized', detail: 'The email or password is wrong.' } }),
} satisfies RouteText;

export const authRefresh = {
  id: 'auth.refresh',
  method: 'POST',
  path: '/auth/refresh',
  throttle: 'identity',
  entry: 'functions/auth/refresh.ts',
  logGroup: 'root',
  summary: 'Exchange a refresh token for a new access token',
  // No bearer token: the refresh token in the body is the credential (as the password is for login).
  access: { scope: 'public' },
  // REFRESH_TOKEN_AUTH: a new access token for a refresh token, nothing changed either.
  rateLimitPlacement: 'beside',
  body: refreshBody,
  success: { status: 200, schema: 'tokenResponse' },
  table: [],
  errors: [401],
  // GetTokensFromRefreshToken evaluates no IAM; the client secret it takes is read from the pool.
  cognito: ['cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authRefreshText = {
  of: authRefresh,
  tag: 'auth',
  description:
    'Exchanges the `refresh_token` of register or login for a new access token. The answer has no `refresh_token`: Cognito issues none on refresh, so keep the one you have (valid 30 days unless revoked). A wrong, expired or revoked refresh token, or an access token sent instead of one, gets 401. No bearer token: the refresh token is the credential.',
  // A credential route's 401 says what was refused (lib/auth/cognito.ts), not the access token's text.
  problems: () => ({ 401: { code: 'unauthorized', detail: 'The refresh token is invalid, expired or revoked.' } }),
} satisfies RouteText;

export const authLogout = {
  id: 'auth.logout',
  method: 'POST',
  path: '/auth/logout',
  throttle: 'identity',
  entry: 'functions/auth/logout.ts',
  logGroup: 'root',
  summary: 'Log out: revoke a refresh token so that it can no longer be refreshed',
  access: { scope: 'public' },
  body: refreshBody,
  success: { status: 204 },
  table: [],
  errors: [401],
  // RevokeToken evaluates no IAM; the client secret it takes is read from the pool.
  cognito: ['cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authLogoutText = {
  of: authLogout,
  tag: 'auth',
  description:
    'Revokes the refresh token (Cognito RevokeToken): it can no longer be refreshed (401). Access tokens already issued are not recalled by this API: they are accepted until they expire (`expires_in`, one hour at most), so a client discards its own. A token Cognito will not revoke (unknown, malformed, not a refresh token) gets 401.',
  // A credential route's 401 says what was refused (lib/auth/cognito.ts), not the access token's text.
  problems: () => ({ 401: { code: 'unauthorized', detail: 'The refresh token is invalid, expired or revoked.' } }),
} satisfies RouteText;
