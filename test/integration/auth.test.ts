import { randomUUID } from 'node:crypto';
import { call, expectProblem, type Reply, subjectOf, uniqueEmail } from '../support/api';

/**
 * Registration, login and health, as a REST client sees them (contract: "Authentication",
 * "Input rules", status codes 201/200/400/401/409).
 */

const password = () => `pw-${randomUUID()}`;

interface Registration {
  email: string;
  password: string;
  display_name: string;
}

const registration = (overrides: Partial<Registration> = {}): Registration => ({
  email: uniqueEmail(),
  password: password(),
  display_name: 'Test User',
  ...overrides,
});

const register = (body: unknown) => call('POST', '/auth/register', { body });
const login = (body: unknown) => call('POST', '/auth/login', { body });

/** The token response of the contract: exactly these fields, a usable bearer token. */
function expectTokenResponse(reply: Reply, status: number) {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(reply.body).toEqual({
    token: expect.any(String),
    token_type: 'Bearer',
    expires_in: expect.any(Number),
    refresh_token: expect.any(String),
  });
  expect(Number.isInteger(reply.body.expires_in)).toBe(true);
  expect(reply.body.expires_in).toBeGreaterThan(0);
  expect(reply.body.token.length).toBeGreaterThan(0);
  expect(reply.body.refresh_token.length).toBeGreaterThan(0);
  return reply.body as { token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string };
}

/** The fields of a problem that must not vary between two answers of the same kind. */
const stableProblemFields = (body: Record<string, unknown>) => {
  const { instance: _instance, ...rest } = body;
  return rest;
};

describe('GET /health', () => {
  it('answers 200 {"status":"ok"} without a token', async () => {
    const reply = await call('GET', '/health');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ status: 'ok' });
  });
});

describe('POST /auth/register', () => {
  it('answers 201 with token, token_type Bearer, a positive expires_in and a refresh_token', async () => {
    expectTokenResponse(await register(registration()), 201);
  });

  it('issues a token that authenticates GET /boards (an empty list for a new user)', async () => {
    const { token } = expectTokenResponse(await register(registration()), 201);
    const boards = await call('GET', '/boards', { token });
    expect(boards.status).toBe(200);
    expect(boards.body).toEqual([]);
  });

  it('issues a token whose subject is a UUID and differs between two users', async () => {
    const first = expectTokenResponse(await register(registration()), 201);
    const second = expectTokenResponse(await register(registration()), 201);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
    expect(subjectOf(first.token)).toMatch(uuid);
    expect(subjectOf(second.token)).toMatch(uuid);
    expect(subjectOf(first.token)).not.toBe(subjectOf(second.token));
  });

  it('answers 409 for an email that is already registered, and the first account keeps its password', async () => {
    const first = registration();
    const created = expectTokenResponse(await register(first), 201);

    const duplicate = { ...first, password: password(), display_name: 'Someone Else' };
    expectProblem(await register(duplicate), 409);

    const original = expectTokenResponse(await login({ email: first.email, password: first.password }), 200);
    expect(subjectOf(original.token)).toBe(subjectOf(created.token));
    expectProblem(await login({ email: first.email, password: duplicate.password }), 401);
  });

  it('answers 409 for an already registered email written in another letter case', async () => {
    const first = registration();
    expectTokenResponse(await register(first), 201);
    expectProblem(await register(registration({ email: first.email.toUpperCase() })), 409);
  });

  it('answers 409 when the first registration used upper case and the second lower case', async () => {
    const email = uniqueEmail();
    expectTokenResponse(await register(registration({ email: email.toUpperCase() })), 201);
    expectProblem(await register(registration({ email })), 409);
  });

  it('does not overwrite the first account when a duplicate registration is refused', async () => {
    const first = registration();
    const created = expectTokenResponse(await register(first), 201);
    const second = registration({ email: first.email.toUpperCase() });
    expectProblem(await register(second), 409);
    expectProblem(await login({ email: first.email, password: second.password }), 401);
    const again = expectTokenResponse(await login({ email: first.email, password: first.password }), 200);
    expect(subjectOf(again.token)).toBe(subjectOf(created.token));
  });

  describe('rejects an invalid body with 400 problem+json', () => {
    const tooLongEmail = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}.test`; // 259 characters
    const invalid: [string, (email: string) => unknown][] = [
      ['an email without @', () => registration({ email: 'not-an-email' })],
      ['an email without a domain', () => registration({ email: 'someone@' })],
      ['an email longer than 254 characters', () => registration({ email: tooLongEmail })],
      ['a non-string email', () => ({ ...registration(), email: 42 })],
      ['a missing email', () => ({ password: password(), display_name: 'Test User' })],
      ['a password of 7 characters', (email) => registration({ email, password: 'abcdefg' })],
      ['an empty password', (email) => registration({ email, password: '' })],
      ['a password of 257 characters', (email) => registration({ email, password: 'p'.repeat(257) })],
      ['a non-string password', (email) => ({ ...registration({ email }), password: 12345678 })],
      ['a missing password', (email) => ({ email, display_name: 'Test User' })],
      ['a missing display_name', (email) => ({ email, password: password() })],
      ['an empty display_name', (email) => registration({ email, display_name: '' })],
      ['a whitespace-only display_name', (email) => registration({ email, display_name: ' \t\n ' })],
      ['a display_name of 101 characters', (email) => registration({ email, display_name: 'd'.repeat(101) })],
      ['a null display_name', (email) => ({ ...registration({ email }), display_name: null })],
    ];

    it.each(invalid)('%s', async (_case, body) => {
      const email = uniqueEmail();
      const reply = await register(body(email));
      expectProblem(reply, 400);
    });

    it('with an empty JSON object', async () => {
      expectProblem(await register({}), 400);
    });

    it('says per field what was expected, without repeating the value sent', async () => {
      const reply = await register({ email: 'not-an-email', password: 12345678, role: 'x' });
      expectProblem(reply, 400);
      expect(reply.body.errors).toEqual([
        { path: 'body.email', message: 'must be an email address' },
        { path: 'body.password', message: 'must be a string' },
        { path: 'body.display_name', message: 'is required' },
      ]);
      expect(JSON.stringify(reply.body)).not.toContain('12345678');
    });
  });

  describe('accepts the email addresses it always accepted', () => {
    const local = () => randomUUID().slice(0, 8);
    it.each([
      ['an apostrophe in the local part', () => `o'brien-${local()}@example.test`],
      ['a punycode (internationalised) domain', () => `${local()}@xn--bcher-kva.example`],
      ['a plus tag and dotted local part', () => `first.last+tag-${local()}@mail.example.test`],
    ])('%s', async (_case, email) => {
      const body = registration({ email: email() });
      expectTokenResponse(await register(body), 201);
      expectTokenResponse(await login({ email: body.email, password: body.password }), 200);
    });
  });

  describe('a registration refused with 400 leaves the email free', () => {
    const refused: [string, (email: string) => Registration][] = [
      ['short password', (email) => registration({ email, password: 'short' })],
      ['too long password', (email) => registration({ email, password: 'p'.repeat(257) })],
      ['blank display_name', (email) => registration({ email, display_name: '   ' })],
      ['too long display_name', (email) => registration({ email, display_name: 'd'.repeat(101) })],
    ];

    it.each(refused)('after a %s, no account exists and the email can be registered', async (_case, body) => {
      const email = uniqueEmail();
      const rejected = body(email);
      expectProblem(await register(rejected), 400);
      // Login with the refused body: 401 (no such account) where its password has a valid shape,
      // else the same 400 as the registration. The new registration below proves no account exists.
      const wellShaped = [...rejected.password].length >= 8 && [...rejected.password].length <= 256;
      expectProblem(await login({ email, password: rejected.password }), wellShaped ? 401 : 400);

      const valid = registration({ email });
      expectTokenResponse(await register(valid), 201);
      expectTokenResponse(await login({ email, password: valid.password }), 200);
    });
  });

  describe('accepts values at the limits', () => {
    it('a password of exactly 8 characters', async () => {
      const body = registration({ password: 'abcdefgh' });
      expectTokenResponse(await register(body), 201);
      expectTokenResponse(await login({ email: body.email, password: 'abcdefgh' }), 200);
    });

    it('a password of exactly 256 characters', async () => {
      const body = registration({ password: `${randomUUID()}${'p'.repeat(220)}` });
      expect(body.password).toHaveLength(256);
      expectTokenResponse(await register(body), 201);
      expectTokenResponse(await login({ email: body.email, password: body.password }), 200);
    });

    it('a display_name of exactly 100 characters', async () => {
      expectTokenResponse(await register(registration({ display_name: 'd'.repeat(100) })), 201);
    });

    it('a display_name of one character', async () => {
      expectTokenResponse(await register(registration({ display_name: 'd' })), 201);
    });
  });
});

describe('POST /auth/login', () => {
  it('answers 200 with the token shape of registration, for the same user', async () => {
    const body = registration();
    const created = expectTokenResponse(await register(body), 201);
    const loggedIn = expectTokenResponse(await login({ email: body.email, password: body.password }), 200);
    expect(subjectOf(loggedIn.token)).toBe(subjectOf(created.token));
    const boards = await call('GET', '/boards', { token: loggedIn.token });
    expect(boards.status).toBe(200);
    expect(boards.body).toEqual([]);
  });

  it('compares the email case-insensitively (registered lower case, logging in upper case)', async () => {
    const body = registration();
    const created = expectTokenResponse(await register(body), 201);
    const loggedIn = expectTokenResponse(await login({ email: body.email.toUpperCase(), password: body.password }), 200);
    expect(subjectOf(loggedIn.token)).toBe(subjectOf(created.token));
  });

  it('compares the email case-insensitively (registered upper case, logging in lower case)', async () => {
    const email = uniqueEmail();
    const body = registration({ email: email.toUpperCase() });
    const created = expectTokenResponse(await register(body), 201);
    const loggedIn = expectTokenResponse(await login({ email, password: body.password }), 200);
    expect(subjectOf(loggedIn.token)).toBe(subjectOf(created.token));
  });

  it('answers 401 for a wrong password and for an unknown email with the same problem (no enumeration)', async () => {
    const body = registration();
    expectTokenResponse(await register(body), 201);

    const wrongPassword = await login({ email: body.email, password: `${body.password}-wrong` });
    const unknownEmail = await login({ email: uniqueEmail(), password: body.password });
    const wrong = expectProblem(wrongPassword, 401);
    const unknown = expectProblem(unknownEmail, 401);
    expect(unknown.title).toBe(wrong.title);
    expect(unknown.detail).toBe(wrong.detail);
    expect(stableProblemFields(unknownEmail.body)).toEqual(stableProblemFields(wrongPassword.body));
  });

  it('answers 401 for a password that differs only in letter case', async () => {
    const body = registration({ password: 'Case-Sensitive-Password' });
    expectTokenResponse(await register(body), 201);
    expectProblem(await login({ email: body.email, password: 'case-sensitive-password' }), 401);
  });

  it('answers 400 for a body without a password', async () => {
    expectProblem(await login({ email: uniqueEmail() }), 400);
  });

  it('answers 400 for a body without an email', async () => {
    expectProblem(await login({ password: password() }), 400);
  });

  it('answers 400, not 401, for an address that is not one or a password no account can have (the contract input rules)', async () => {
    const body = registration();
    expectTokenResponse(await register(body), 201);
    const cases: [unknown, string][] = [
      [{ email: 'nope', password: body.password }, 'body.email'],
      [{ email: `${'a'.repeat(250)}@x.io`, password: body.password }, 'body.email'],
      [{ email: body.email, password: 'seven77' }, 'body.password'],
      [{ email: body.email, password: 'p'.repeat(257) }, 'body.password'],
    ];
    for (const [input, path] of cases) {
      const reply = await login(input);
      expectProblem(reply, 400);
      expect(reply.body.errors.map((error: { path: string }) => error.path)).toEqual([path]);
    }
  });
});
