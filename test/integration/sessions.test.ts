import { randomUUID } from 'node:crypto';
import { call, expectProblem, type Reply, subjectOf, uniqueEmail } from '../support/api';
import { localEnv } from '../support/local-table';
import { accessClaims, makeSigner } from '../support/tokens';

/**
 * Sessions, on the local stack: POST /auth/refresh (Cognito REFRESH_TOKEN_AUTH)
 * and POST /auth/logout (Cognito RevokeToken).
 *
 * What the Cognito emulator (cognito-local 5.3) shows, read from its source: it keeps each user's
 * refresh tokens in a list, refreshes only a token on that list (NotAuthorizedException
 * otherwise) and RevokeToken takes the token off the list (NotAuthorizedException for a token not
 * on it). So refresh after logout, and logout twice, are tested here for real.
 * What it cannot show: a refresh token that has EXPIRED (it never expires one), RevokeToken's own
 * error names on AWS (UnauthorizedException, UnsupportedTokenTypeException,
 * InvalidParameterException; the emulator answers NotAuthorizedException for everything), and the
 * recall by AWS of the access tokens issued from a revoked refresh token (for Cognito's own APIs;
 * this API verifies access tokens by signature and expiry, so they stay valid here until they
 * expire on AWS too). The service's mapping of those answers is covered with a mocked Cognito in
 * test/unit/sessions.test.ts.
 */

interface Session {
  email: string;
  password: string;
  token: string;
  refresh_token: string;
}

async function register(): Promise<Session> {
  const email = uniqueEmail();
  const password = `pw-${randomUUID()}`;
  const reply = await call('POST', '/auth/register', { body: { email, password, display_name: 'Session User' } });
  expect(reply.status).toBe(201);
  return { email, password, token: reply.body.token, refresh_token: reply.body.refresh_token };
}

const refresh = (body: unknown) => call('POST', '/auth/refresh', { body });
const logout = (body: unknown) => call('POST', '/auth/logout', { body });

/** The token response of a refresh: login's shape without a refresh_token (the client keeps its own). */
function expectRefreshed(reply: Reply): string {
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(reply.body).toEqual({ token: expect.any(String), token_type: 'Bearer', expires_in: expect.any(Number) });
  expect(Number.isInteger(reply.body.expires_in)).toBe(true);
  expect(reply.body.expires_in).toBeGreaterThan(0);
  return reply.body.token as string;
}

/** The contract's 401 for a refresh token: problem+json, the same detail whatever was wrong. */
function expectRefused(reply: Reply) {
  const problem = expectProblem(reply, 401);
  expect(problem.detail).toBe('The refresh token is invalid, expired or revoked.');
  expect(reply.headers.get('www-authenticate')).toBe('Bearer');
  expect(JSON.stringify(reply.body)).not.toMatch(/Exception|cognito/i);
}

describe('POST /auth/refresh', () => {
  it('exchanges the refresh token of registration for a new access token of the same user that works on GET /boards', async () => {
    const session = await register();
    const token = expectRefreshed(await refresh({ refresh_token: session.refresh_token }));
    expect(subjectOf(token)).toBe(subjectOf(session.token));
    const boards = await call('GET', '/boards', { token });
    expect(boards.status).toBe(200);
    expect(boards.body).toEqual([]);
  });

  it('exchanges the refresh token of a login, and the same refresh token can be used again', async () => {
    const session = await register();
    const login = await call('POST', '/auth/login', { body: { email: session.email, password: session.password } });
    expect(login.status).toBe(200);
    const first = expectRefreshed(await refresh({ refresh_token: login.body.refresh_token }));
    const second = expectRefreshed(await refresh({ refresh_token: login.body.refresh_token }));
    expect(subjectOf(first)).toBe(subjectOf(session.token));
    expect(subjectOf(second)).toBe(subjectOf(session.token));
  });

  it('a token of one user never refreshes into another user', async () => {
    const [a, b] = await Promise.all([register(), register()]);
    expect(subjectOf(expectRefreshed(await refresh({ refresh_token: a.refresh_token })))).toBe(subjectOf(a.token));
    expect(subjectOf(expectRefreshed(await refresh({ refresh_token: b.refresh_token })))).toBe(subjectOf(b.token));
  });

  describe('answers 401 problem+json, with one detail, for a refresh token Cognito does not honour', () => {
    it.each<[string, () => Promise<string>]>([
      ['garbage', async () => 'not-a-refresh-token'],
      ['a JWT-shaped string', async () => 'aaaa.bbbb.cccc'],
      [
        'a token signed for another pool',
        async () => {
          const issuer = localEnv().TOKEN_ISSUER!.replace(/\/[^/]+$/, '/us-east-1_OtherPool');
          return makeSigner().sign({ ...accessClaims(issuer, 'other-client'), token_use: 'refresh' });
        },
      ],
      ['an access token instead of a refresh token', async () => (await register()).token],
      [
        'a refresh token with one character changed',
        async () => {
          const { refresh_token } = await register();
          const last = refresh_token.at(-1) === 'A' ? 'B' : 'A';
          return `${refresh_token.slice(0, -1)}${last}`;
        },
      ],
    ])('%s', async (_case, token) => {
      expectRefused(await refresh({ refresh_token: await token() }));
    });
  });

  describe('answers 400 for a malformed body', () => {
    it.each<[string, unknown]>([
      ['an empty object', {}],
      ['an empty refresh_token', { refresh_token: '' }],
      ['a refresh_token with whitespace', { refresh_token: 'abc def' }],
      ['a non-string refresh_token', { refresh_token: 42 }],
      ['a null refresh_token', { refresh_token: null }],
      ['a refresh_token over 8192 characters', { refresh_token: 'a'.repeat(8193) }],
    ])('%s', async (_case, body) => {
      expectProblem(await refresh(body), 400);
      expectProblem(await logout(body), 400);
    });
  });
});

describe('POST /auth/logout', () => {
  it('revokes the refresh token: 204, then refreshing it is 401 and revoking it again is 401', async () => {
    const session = await register();
    expectRefreshed(await refresh({ refresh_token: session.refresh_token }));

    const reply = await logout({ refresh_token: session.refresh_token });
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');

    // cognito-local enforces the revocation: the token is gone from the user's list.
    expectRefused(await refresh({ refresh_token: session.refresh_token }));
    // A second logout: the emulator no longer knows the token (NotAuthorizedException), so 401.
    // On AWS, Cognito may accept a second revocation of its own token: then it is 204 again.
    expectRefused(await logout({ refresh_token: session.refresh_token }));
  });

  it('ends one session only: a refresh token of another login of the same user still refreshes', async () => {
    const session = await register();
    const login = await call('POST', '/auth/login', { body: { email: session.email, password: session.password } });
    expect(login.status).toBe(200);
    expect((await logout({ refresh_token: session.refresh_token })).status).toBe(204);
    expectRefused(await refresh({ refresh_token: session.refresh_token }));
    const token = expectRefreshed(await refresh({ refresh_token: login.body.refresh_token }));
    expect(subjectOf(token)).toBe(subjectOf(session.token));
  });

  it('does not recall access tokens already issued: they work until they expire (the client discards its own)', async () => {
    const session = await register();
    expect((await logout({ refresh_token: session.refresh_token })).status).toBe(204);
    expect((await call('GET', '/boards', { token: session.token })).status).toBe(200);
  });

  it.each<[string, () => Promise<string>]>([
    ['garbage', async () => 'not-a-refresh-token'],
    ['an access token instead of a refresh token', async () => (await register()).token],
  ])('answers 401 problem+json for %s', async (_case, token) => {
    expectRefused(await logout({ refresh_token: await token() }));
  });
});
