import { createSign, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { routes } from '../../lib/routes';
import { call, expectProblem, newBoard, newUser, type Reply, type TestUser } from '../support/api';

/**
 * Contract, status 401: no Authorization header, not the Bearer scheme, or a token that fails
 * verification (signature, issuer, client, token_use, expiry) is 401 problem+json with
 * WWW-Authenticate: Bearer, plus error="invalid_token" when a token was presented. Walked over
 * every authenticated row of the route table, so a new route cannot forget its authentication.
 */

// ---- JWT helpers (test-local) -------------------------------------------------------------

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
const partsOf = (token: string) => {
  const [header, payload, signature] = token.split('.');
  if (header === undefined || payload === undefined || signature === undefined) throw new Error('not a JWT');
  return { header, payload, signature };
};

/** Same header and signature, payload's `sub` replaced (an impersonation attempt). */
function withTamperedSubject(token: string, sub: string): string {
  const { header, payload, signature } = partsOf(token);
  return `${header}.${encode({ ...decode(payload), sub })}.${signature}`;
}

/** Same header and payload, one byte in the middle of the signature flipped (not only padding bits). */
function withTamperedSignature(token: string): string {
  const { header, payload, signature } = partsOf(token);
  const bytes = Buffer.from(signature, 'base64url');
  const middle = Math.floor(bytes.length / 2);
  bytes[middle] = bytes[middle]! ^ 0xff;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

/** `alg: none`, the genuine claims, an empty signature. */
function unsigned(token: string): string {
  return `${encode({ alg: 'none' })}.${partsOf(token).payload}.`;
}

/** The genuine claims with the given changes, signed RS256 by a key the service has never seen. */
function forged(token: string, privateKey: KeyObject, claims: Record<string, unknown>): string {
  const header = encode({ alg: 'RS256', kid: 'CognitoLocal', typ: 'JWT' });
  const payload = encode({ ...decode(partsOf(token).payload), ...claims });
  const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(privateKey).toString('base64url');
  return `${header}.${payload}.${signature}`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

// ---- the routes -----------------------------------------------------------------------------

/** A well-formed body for each route that takes one, so that only the token can be wrong. */
const validBodies: Partial<Record<keyof typeof routes, unknown>> = {
  'boards.create': { title: 'Board' },
  'boards.rename': { title: 'Board' },
  'columns.create': { title: 'Column' },
  'cards.create': { title: 'Card' },
  'cards.update': { title: 'Card' },
  'cards.move': { target_column_id: randomUUID() },
  'columns.rename': { title: 'Column' },
  'columns.move': {},
  'members.add': { email: 'someone@example.test' },
  'members.update': { role: 'member' },
  'labels.create': { name: 'Label', color: '#123456' },
  'labels.update': { name: 'Label' },
  // A public https host: a webhook URL is judged by its form here, never looked up.
  'webhooks.create': { url: 'https://hooks.example.com/task-board' },
  'webhooks.update': { description: 'Webhook' },
  // A code never mailed, passwords that are not the caller's: nothing changes whoever sends them.
  'auth.verify-email': { code: '000000' },
  'auth.password.change': { current_password: 'not the password', new_password: 'long enough password' },
  'auth.account.delete': { password: 'not the password' },
  'auth.tokens.create': { name: 'Token', scopes: ['boards:read'], expires_in_days: 1 },
  'comments.create': { body: 'Comment' },
  'comments.update': { body: 'Comment' },
  'boards.batch': { operations: [{ op: 'column.create', title: 'Column' }] },
};

const authenticatedRoutes = Object.entries(routes)
  .filter(([, row]) => row.access.scope !== 'public')
  .map(([id, row]) => ({ id: id as keyof typeof routes, method: row.method, template: row.path }));

const send = (route: (typeof authenticatedRoutes)[number], authorization?: string) =>
  call(
    route.method,
    route.template.replace('{id}', randomUUID()).replace('{user_id}', randomUUID()).replace('{label_id}', randomUUID()),
    {
      headers: authorization === undefined ? {} : { authorization },
      body: validBodies[route.id],
    },
  );

it('has a well-formed body for every authenticated route that takes one', () => {
  const needBody = authenticatedRoutes.filter((route) => 'body' in routes[route.id]).map((route) => route.id);
  expect(needBody.filter((id) => !(id in validBodies))).toEqual([]);
});

// ---- the cases ------------------------------------------------------------------------------

interface Material {
  valid: string;
  victim: TestUser;
  /** A fresh RSA key with which the service's JWKS has nothing to do. */
  foreignKey: KeyObject;
}

/** Authorization header values that carry a bearer token which must not verify. */
const invalidTokenCases: [string, (m: Material) => string][] = [
  ['Bearer with garbage', () => 'Bearer garbage'],
  ['Bearer with three garbage segments', () => 'Bearer aaaa.bbbb.cccc'],
  [
    'a token whose payload was changed (sub of another user), signature kept',
    (m) => `Bearer ${withTamperedSubject(m.valid, m.victim.id)}`,
  ],
  ['a token with a tampered signature', (m) => `Bearer ${withTamperedSignature(m.valid)}`],
  ['an alg:none token with an empty signature', (m) => `Bearer ${unsigned(m.valid)}`],
  [
    'an expired token signed by a foreign RSA key with kid CognitoLocal',
    (m) =>
      `Bearer ${forged(m.valid, m.foreignKey, { exp: nowSeconds() - 3600, iat: nowSeconds() - 7200, auth_time: nowSeconds() - 7200 })}`,
  ],
  [
    'an unexpired token signed by a foreign RSA key with kid CognitoLocal',
    (m) => `Bearer ${forged(m.valid, m.foreignKey, { exp: nowSeconds() + 3600, iat: nowSeconds() })}`,
  ],
  ['a valid token under the lower-case scheme name "bearer"', (m) => `bearer ${m.valid}`],
  ['an oversized token (9000 characters)', () => `Bearer ${'A'.repeat(9000)}`],
];

const caseNames = invalidTokenCases.map(([name]) => name);
let material: Material;
/** Authorization header per case name, built once (key generation is the slow part). */
let invalidHeaders: Map<string, string>;
let reference: Record<string, unknown>;

const stable = (reply: Reply) => {
  const { type, title, status, detail, code } = reply.body as Record<string, unknown>;
  return { type, title, status, detail, code };
};

beforeAll(async () => {
  const [user, victim] = await Promise.all([newUser(), newUser()]);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  material = { valid: user.token, victim, foreignKey: privateKey };
  invalidHeaders = new Map(invalidTokenCases.map(([name, build]) => [name, build(material)]));
  // The one invalid-token answer every other case must repeat.
  reference = stable(await call('GET', '/boards', { headers: { authorization: 'Bearer garbage' } }));
});

describe.each(authenticatedRoutes)('$method $template ($id)', (route) => {
  it('accepts the genuine token (control: the 401s come from the token alone)', async () => {
    const reply = await send(route, `Bearer ${material.valid}`);
    expect(reply.status).not.toBe(401);
    // A code that was never mailed is refused only once the token was accepted.
    if (route.id === 'auth.verify-email') expect(reply.body.code).toBe('invalid_code');
    else expect([200, 201, 202, 204, 403, 404]).toContain(reply.status);
  });

  it('answers 401, WWW-Authenticate "Bearer", without an Authorization header', async () => {
    const reply = await send(route);
    expectProblem(reply, 401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 401, WWW-Authenticate "Bearer", for the Basic scheme (no bearer token presented)', async () => {
    const reply = await send(route, 'Basic dXNlcjpwYXNzd29yZA==');
    expectProblem(reply, 401);
    // RFC 6750 §3.1: a request using an unsupported authentication method carries no error code.
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
  });

  it.each(caseNames)('answers 401, WWW-Authenticate Bearer error="invalid_token", the common body, for %s', async (name) => {
    const reply = await send(route, invalidHeaders.get(name));
    expectProblem(reply, 401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(stable(reply)).toEqual(reference);
  });
});

describe('a rejected token changes nothing', () => {
  it('creates no board, neither for the token’s user nor for the user named in a tampered sub', async () => {
    const [user, victim] = await Promise.all([newUser(), newUser()]);
    const m: Material = { ...material, valid: user.token, victim };
    for (const [, header] of invalidTokenCases) {
      const reply = await call('POST', '/boards', { headers: { authorization: header(m) }, body: { title: 'Forged' } });
      expectProblem(reply, 401);
    }
    for (const who of [user, victim]) {
      const list = await call('GET', '/boards', { token: who.token });
      expect(list.status).toBe(200);
      expect(list.body).toEqual([]);
    }
  });

  it('neither renames nor deletes the victim’s board when sub is tampered to the victim', async () => {
    const [attacker, victim] = await Promise.all([newUser(), newUser()]);
    const board = await newBoard(victim, 'Victim board');
    const authorization = `Bearer ${withTamperedSubject(attacker.token, victim.id)}`;

    expectProblem(await call('PATCH', `/boards/${board.id}`, { headers: { authorization }, body: { title: 'Pwned' } }), 401);
    expectProblem(await call('DELETE', `/boards/${board.id}`, { headers: { authorization } }), 401);
    expectProblem(await call('GET', `/boards/${board.id}`, { headers: { authorization } }), 401);

    const tree = await call('GET', `/boards/${board.id}`, { token: victim.token });
    expect(tree.status).toBe(200);
    // Untouched: no change has taken a seq.
    expect(tree.body).toEqual({ ...board, seq: 0, columns: [], labels: [] });
  });
});

describe('the token checks themselves', () => {
  it('the genuine token of the test user verifies (control for the tampering helpers)', async () => {
    const reply = await call('GET', '/boards', { headers: { authorization: `Bearer ${material.valid}` } });
    expect(reply.status).toBe(200);
  });

  it('the tampered-sub token names the victim, so a 401 is not explained by a malformed payload', () => {
    const tampered = withTamperedSubject(material.valid, material.victim.id);
    expect(decode(partsOf(tampered).payload).sub).toBe(material.victim.id);
    expect(partsOf(tampered).signature).toBe(partsOf(material.valid).signature);
  });

  it('the tampered signature differs from the genuine one in its decoded bytes', () => {
    const genuine = Buffer.from(partsOf(material.valid).signature, 'base64url');
    const tampered = Buffer.from(partsOf(withTamperedSignature(material.valid)).signature, 'base64url');
    expect(tampered.equals(genuine)).toBe(false);
    expect(tampered).toHaveLength(genuine.length);
  });
});
