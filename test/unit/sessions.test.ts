import {
  CognitoIdentityProviderClient,
  DescribeUserPoolClientCommand,
  GetTokensFromRefreshTokenCommand,
  InternalErrorException,
  InvalidParameterException,
  NotAuthorizedException,
  OperationNotEnabledException,
  RevokeTokenCommand,
  UnauthorizedException,
  UnsupportedOperationException,
  UnsupportedTokenTypeException,
} from '@aws-sdk/client-cognito-identity-provider';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as logout } from '../../functions/auth/logout';
import { handler as refresh } from '../../functions/auth/refresh';
import { apiEvent } from '../support/events';

/**
 * POST /auth/refresh and /auth/logout against the answers real Cognito gives and the local
 * emulator (cognito-local) does not: an expired refresh token (the emulator never expires one),
 * RevokeToken's own error names (the emulator answers NotAuthorizedException for everything),
 * an access token refused as a refresh token, a client without revocation. The happy path and
 * the revocation the emulator does enforce are in test/integration/sessions.test.ts.
 */
const cognito = mockClient(CognitoIdentityProviderClient);
const context = {} as Context;
const meta = { $metadata: {} };

/** A public route's event: no Authorization header (the refresh token is the credential). */
function event(path: string, body: unknown): APIGatewayProxyEventV2 {
  const withToken = apiEvent('unused', 'POST', path, body);
  const { authorization: _authorization, ...headers } = withToken.headers;
  return { ...withToken, headers };
}
const parse = (body: string | undefined) => JSON.parse(body ?? '{}');
const ACCESS_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4IiwiZXhwIjo5OTk5OTk5OTk5fQ.c2ln';

const CLIENT_SECRET = 'the-app-client-secret';
beforeEach(() => {
  cognito.reset();
  cognito.on(DescribeUserPoolClientCommand).resolves({ UserPoolClient: { ClientSecret: CLIENT_SECRET } });
});

function expectUnauthorized(reply: { statusCode?: number; headers?: Record<string, unknown>; body?: string }) {
  expect(reply.statusCode).toBe(401);
  expect(reply.headers).toMatchObject({ 'content-type': 'application/problem+json', 'www-authenticate': 'Bearer' });
  expect(parse(reply.body)).toMatchObject({
    status: 401,
    code: 'unauthorized',
    detail: 'The refresh token is invalid, expired or revoked.',
  });
  expect(reply.body).not.toMatch(/Exception|Cognito/);
}

describe('POST /auth/refresh', () => {
  it("sends GetTokensFromRefreshToken with the token and the client's secret, and answers the new access token without a refresh_token", async () => {
    cognito
      .on(GetTokensFromRefreshTokenCommand)
      .resolves({ AuthenticationResult: { AccessToken: ACCESS_TOKEN, ExpiresIn: 3600 } });
    const reply = await refresh(event('/auth/refresh', { refresh_token: 'the.refresh.token' }), context);
    expect(reply.statusCode).toBe(200);
    expect(parse(reply.body)).toEqual({ token: ACCESS_TOKEN, token_type: 'Bearer', expires_in: 3600 });
    expect(cognito.commandCalls(GetTokensFromRefreshTokenCommand)[0]!.args[0].input).toEqual({
      ClientId: process.env.USER_POOL_CLIENT_ID,
      ClientSecret: CLIENT_SECRET,
      RefreshToken: 'the.refresh.token',
    });
  });

  it.each([
    ['an expired refresh token', 'Refresh Token has expired'],
    ['a revoked refresh token', 'Refresh Token has been revoked'],
    ['an access token sent as a refresh token', 'Invalid Refresh Token'],
  ])('%s (NotAuthorizedException) is 401 problem+json', async (_case, message) => {
    cognito.on(GetTokensFromRefreshTokenCommand).rejects(new NotAuthorizedException({ message, ...meta }));
    expectUnauthorized(await refresh(event('/auth/refresh', { refresh_token: 'some.refresh.token' }), context));
  });

  it('an answer without an access token is 401, not a token response', async () => {
    cognito.on(GetTokensFromRefreshTokenCommand).resolves({ AuthenticationResult: {} });
    expectUnauthorized(await refresh(event('/auth/refresh', { refresh_token: 'some.refresh.token' }), context));
  });

  it("a token outside Cognito's token pattern (InvalidParameterException) is the same 401, not a 500", async () => {
    cognito
      .on(GetTokensFromRefreshTokenCommand)
      .rejects(new InvalidParameterException({ message: "Value at 'refreshToken' failed to satisfy constraint", ...meta }));
    expectUnauthorized(await refresh(event('/auth/refresh', { refresh_token: 'not$a&token' }), context));
  });

  it('a client set up without the flow (OperationNotEnabledException) is a 500, not a 401 blaming the caller', async () => {
    cognito
      .on(GetTokensFromRefreshTokenCommand)
      .rejects(new OperationNotEnabledException({ message: 'refresh not enabled for this client', ...meta }));
    const reply = await refresh(event('/auth/refresh', { refresh_token: 'some.refresh.token' }), context);
    expect(reply.statusCode).toBe(500);
  });

  it('refuses a malformed body with 400 before calling Cognito', async () => {
    for (const body of [{}, { refresh_token: '' }, { refresh_token: 'has space' }, { refresh_token: 42 }]) {
      const reply = await refresh(event('/auth/refresh', body), context);
      expect(reply.statusCode).toBe(400);
    }
    expect(cognito.calls()).toHaveLength(0);
  });
});

describe('POST /auth/logout', () => {
  it("sends RevokeToken with the token, the client id and the client's secret, and answers 204", async () => {
    cognito.on(RevokeTokenCommand).resolves({});
    const reply = await logout(event('/auth/logout', { refresh_token: 'the.refresh.token' }), context);
    expect(reply.statusCode).toBe(204);
    expect(reply.body ?? '').toBe('');
    expect(cognito.commandCalls(RevokeTokenCommand)[0]!.args[0].input).toEqual({
      ClientId: process.env.USER_POOL_CLIENT_ID,
      ClientSecret: CLIENT_SECRET,
      Token: 'the.refresh.token',
    });
  });

  it.each([
    ['UnauthorizedException (a token Cognito cannot revoke)', new UnauthorizedException({ message: 'Invalid token', ...meta })],
    ['UnsupportedTokenTypeException (an access token)', new UnsupportedTokenTypeException({ message: 'Unsupported', ...meta })],
    ['InvalidParameterException (outside the token pattern)', new InvalidParameterException({ message: 'Token', ...meta })],
    ['NotAuthorizedException (what the emulator answers)', new NotAuthorizedException({ message: 'Invalid token', ...meta })],
  ])('%s is 401 problem+json', async (_case, error) => {
    cognito.on(RevokeTokenCommand).rejects(error);
    expectUnauthorized(await logout(event('/auth/logout', { refresh_token: 'some.refresh.token' }), context));
  });

  it.each([
    [
      'revocation off for the client (UnsupportedOperationException)',
      new UnsupportedOperationException({ message: 'x', ...meta }),
    ],
    ['an internal error of Cognito', new InternalErrorException({ message: 'x', ...meta })],
  ])('%s is a 5xx, not a 401', async (_case, error) => {
    cognito.on(RevokeTokenCommand).rejects(error);
    const reply = await logout(event('/auth/logout', { refresh_token: 'some.refresh.token' }), context);
    expect(reply.statusCode).toBeGreaterThanOrEqual(500);
  });

  it('refuses a malformed body with 400 before calling Cognito', async () => {
    const reply = await logout(event('/auth/logout', { refresh_token: 'x'.repeat(8193) }), context);
    expect(reply.statusCode).toBe(400);
    expect(cognito.calls()).toHaveLength(0);
  });
});
