import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  createSign,
  generateKeyPairSync,
  type KeyObject,
  randomUUID,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AdminConfirmSignUpCommand,
  CognitoIdentityProviderClient,
  CreateUserPoolClientCommand,
  CreateUserPoolCommand,
  InitiateAuthCommand,
  SignUpCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { call, expectProblem, newBoard, newUser, type Reply, type TestUser } from '../support/api';
import { localEnv } from '../support/local-table';

/**
 * Forged tokens, made for real. cognito-local signs every token with one RSA key
 * that ships in its package (kid `CognitoLocal`, RS256); the tests sign with that very key, so
 * each forgery is a token the verifier would accept but for the one property under test. The
 * positive control (same key, the genuine claims of a registered user) must be accepted, or the
 * 401s would prove nothing. Every forgery is 401 problem+json with one and the same body and
 * `WWW-Authenticate: Bearer error="invalid_token"`, and none of them reaches data.
 *
 * What aws-jwt-verify 5 checks (dist/cjs/jwt.js, jwk.js, jwt-verifier.js): the alg is a
 * supported asymmetric one and matches the JWK's `alg`; `kid` is a string found in the JWKS; the
 * signature; `exp` (no grace) and `nbf` when present; `iss`; plus the service's customJwtCheck
 * (token_use, client_id, sub, exp and iat present, iat not in the future beyond a minute's clock
 * skew, and a lifetime no longer than Cognito's one-day maximum). Cognito access tokens carry no
 * `nbf`, so "not yet valid" is tested both through `nbf` and through `iat`.
 */

// ---- signing ------------------------------------------------------------------------------------

const COGNITO_LOCAL_KEYS = join(__dirname, '..', '..', 'node_modules', 'cognito-local', 'lib', 'keys');
const poolPrivate = JSON.parse(readFileSync(join(COGNITO_LOCAL_KEYS, 'cognitoLocal.private.json'), 'utf8')) as {
  jwk: Record<string, string>;
  pem: string;
};
const poolPublic = JSON.parse(readFileSync(join(COGNITO_LOCAL_KEYS, 'cognitoLocal.public.json'), 'utf8')) as {
  jwk: Record<string, string>;
  pem: string;
};
const POOL_KID = 'CognitoLocal';

type Json = Record<string, unknown>;
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Json;

function rsa(header: Json, claims: Json, key: KeyObject, digest = 'RSA-SHA256'): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createSign(digest).update(input).sign(key).toString('base64url')}`;
}

function hmac(header: Json, claims: Json, secret: string | Buffer): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

// ---- the material -------------------------------------------------------------------------------

interface Material {
  /** The pool's real signing key. */
  key: KeyObject;
  /** A key the pool never had. */
  foreignKey: KeyObject;
  user: TestUser;
  /** The claims of the user's genuine access token, with fresh times. */
  claims: () => Json;
  header: Json;
  issuer: string;
  clientId: string;
  /** Genuine access tokens of the same emulator: another app client of the pool, another pool. */
  otherClientToken: string;
  otherPoolToken: string;
}

let m: Material;
/** A board of the user the forgeries name: an accepted forgery would delete it. */
let victimBoard: { id: string; title: string };

/** A genuine access token from `clientId` of `poolId`, issued by the emulator itself. */
async function emulatorToken(cognito: CognitoIdentityProviderClient, clientId: string, username: string, password: string) {
  const out = await cognito.send(
    new InitiateAuthCommand({
      ClientId: clientId,
      AuthFlow: 'USER_PASSWORD_AUTH',
      AuthParameters: { USERNAME: username, PASSWORD: password },
    }),
  );
  return out.AuthenticationResult!.AccessToken!;
}

async function otherTokens(user: TestUser, userPoolId: string, endpoint: string) {
  const cognito = new CognitoIdentityProviderClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    // Another app client of the very pool the service trusts, and the same user logging in through it.
    const client = await cognito.send(
      new CreateUserPoolClientCommand({
        UserPoolId: userPoolId,
        ClientName: `other-client-${randomUUID()}`,
        ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH'],
      }),
    );
    const otherClientToken = await emulatorToken(
      cognito,
      client.UserPoolClient!.ClientId!,
      user.email.toLowerCase(),
      user.password,
    );

    // Another pool of the same emulator (signed with the same key), and a user of it.
    const pool = await cognito.send(new CreateUserPoolCommand({ PoolName: `other-pool-${randomUUID()}` }));
    const poolId = pool.UserPool!.Id!;
    const poolClient = await cognito.send(
      new CreateUserPoolClientCommand({
        UserPoolId: poolId,
        ClientName: 'other',
        ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH'],
      }),
    );
    const username = `other-${randomUUID()}@example.test`;
    const password = `pw-${randomUUID()}`;
    await cognito.send(
      new SignUpCommand({ ClientId: poolClient.UserPoolClient!.ClientId!, Username: username, Password: password }),
    );
    await cognito.send(new AdminConfirmSignUpCommand({ UserPoolId: poolId, Username: username }));
    const otherPoolToken = await emulatorToken(cognito, poolClient.UserPoolClient!.ClientId!, username, password);
    return { otherClientToken, otherPoolToken };
  } finally {
    cognito.destroy();
  }
}

beforeAll(async () => {
  const env = localEnv();
  const user = await newUser();
  victimBoard = await newBoard(user, 'Victim board');
  const genuine = decode(user.token.split('.')[1]!);
  const header = decode(user.token.split('.')[0]!);
  m = {
    key: createPrivateKey(poolPrivate.pem),
    foreignKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
    user,
    header,
    claims: () => {
      const now = nowSeconds();
      return { ...genuine, auth_time: now, iat: now, exp: now + 3600, jti: randomUUID() };
    },
    issuer: env.TOKEN_ISSUER!,
    clientId: env.USER_POOL_CLIENT_ID!,
    ...(await otherTokens(user, env.USER_POOL_ID!, env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER!)),
  };
});

// ---- the cases ----------------------------------------------------------------------------------

/** A token signed with the pool's key whose claims and header are the genuine ones plus `changes`. */
const signed = (claims: Json = {}, header: Json = {}) => rsa({ ...m.header, ...header }, { ...m.claims(), ...claims }, m.key);
const without = (object: Json, ...names: string[]) =>
  Object.fromEntries(Object.entries(object).filter(([k]) => !names.includes(k)));
const parts = (token: string) => token.split('.') as [string, string, string];

/** An RS256 token signed by the pool's key whose header is at least `size` characters long. */
function withLargeHeader(size: number): string {
  const header = { ...m.header, x: 'a'.repeat(Math.ceil((size * 3) / 4)) };
  return rsa(header, m.claims(), m.key);
}

const forgeries: [string, () => string][] = [
  // Claims: each one property wrong, everything else as the pool issues it.
  [
    'expired (exp two minutes ago)',
    () => signed({ exp: nowSeconds() - 120, iat: nowSeconds() - 3720, auth_time: nowSeconds() - 3720 }),
  ],
  ['not yet valid (nbf an hour ahead)', () => signed({ nbf: nowSeconds() + 3600 })],
  ['issued in the future (iat an hour ahead)', () => signed({ iat: nowSeconds() + 3600, exp: nowSeconds() + 7200 })],
  ['a lifetime longer than Cognito allows (a year)', () => signed({ exp: nowSeconds() + 365 * 24 * 3600 })],
  ['iat missing', () => rsa(m.header, without(m.claims(), 'iat'), m.key)],
  ['exp missing', () => rsa(m.header, without(m.claims(), 'exp'), m.key)],
  ['exp not a number', () => signed({ exp: String(nowSeconds() + 3600) })],
  ['sub missing', () => rsa(m.header, without(m.claims(), 'sub'), m.key)],
  ['sub empty', () => signed({ sub: '' })],
  [
    'an ID token (token_use id, aud the app client, no client_id)',
    () =>
      rsa(
        m.header,
        { ...without(m.claims(), 'client_id', 'scope'), token_use: 'id', aud: m.clientId, email: m.user.email },
        m.key,
      ),
  ],
  ['an ID token that also carries the right client_id', () => signed({ token_use: 'id', aud: m.clientId })],
  ['token_use missing', () => rsa(m.header, without(m.claims(), 'token_use'), m.key)],
  ["another app client's client_id", () => signed({ client_id: `${m.clientId}x` })],
  ['client_id missing', () => rsa(m.header, without(m.claims(), 'client_id'), m.key)],
  ["another pool's issuer", () => signed({ iss: `${m.issuer.replace(/\/[^/]+$/, '')}/us-east-1_OtherPool` })],
  [
    "the AWS issuer URL of the pool's id",
    () => signed({ iss: `https://cognito-idp.us-east-1.amazonaws.com/${m.issuer.split('/').pop()}` }),
  ],
  ['issuer missing', () => rsa(m.header, without(m.claims(), 'iss'), m.key)],
  // Genuine tokens from elsewhere in the same emulator (same signing key).
  ['a genuine access token of the same user from another app client of the pool', () => m.otherClientToken],
  ['a genuine access token from another user pool', () => m.otherPoolToken],
  // Keys and algorithms.
  [
    'HS256 with the pool public key (PKCS#1 PEM) as the HMAC secret',
    () => hmac({ ...m.header, alg: 'HS256' }, m.claims(), poolPublic.pem),
  ],
  [
    'HS256 with the pool public key (SPKI PEM) as the HMAC secret',
    () =>
      hmac(
        { ...m.header, alg: 'HS256' },
        m.claims(),
        createPublicKey({ key: poolPublic.jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString(),
      ),
  ],
  [
    'HS256 with the JWKS entry as the HMAC secret',
    () => hmac({ ...m.header, alg: 'HS256' }, m.claims(), JSON.stringify(poolPublic.jwk)),
  ],
  [
    'RS512 signed with the pool key (an algorithm the JWK does not allow)',
    () => rsa({ ...m.header, alg: 'RS512' }, m.claims(), m.key, 'RSA-SHA512'),
  ],
  ["a key the pool never had, with the pool's kid", () => rsa(m.header, m.claims(), m.foreignKey)],
  [
    'a foreign key embedded in the header (jwk), with the pool kid',
    () =>
      rsa(
        { ...m.header, jwk: createPublicKey(m.foreignKey).export({ format: 'jwk' }), jku: 'https://attacker.example/jwks.json' },
        m.claims(),
        m.foreignKey,
      ),
  ],
  ['no kid', () => rsa(without(m.header, 'kid'), m.claims(), m.key)],
  ['a kid the pool does not have', () => signed({}, { kid: `${POOL_KID}-rotated` })],
  ['alg none, empty signature', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(m.claims())}.`],
  ['alg None, empty signature', () => `${b64({ alg: 'None', typ: 'JWT', kid: POOL_KID })}.${b64(m.claims())}.`],
  ['alg NONE, empty signature', () => `${b64({ alg: 'NONE', typ: 'JWT', kid: POOL_KID })}.${b64(m.claims())}.`],
  [
    'alg none with the genuine signature kept',
    () => {
      const [, payload, signature] = parts(signed());
      return `${b64({ ...m.header, alg: 'none' })}.${payload}.${signature}`;
    },
  ],
  // Shape.
  [
    'two parts (header.payload)',
    () => {
      const [header, payload] = parts(signed());
      return `${header}.${payload}`;
    },
  ],
  ['three parts, empty signature', () => `${parts(signed()).slice(0, 2).join('.')}.`],
  ['four parts (a valid token plus a segment)', () => `${signed()}.${parts(signed())[2]}`],
  ['an oversized header (over 8 KB), correctly signed', () => withLargeHeader(9 * 1024)],
  // Tampering with a correctly signed token.
  [
    'payload tampered (sub of another user), signature kept',
    () => {
      const [header, payload, signature] = parts(signed());
      return `${header}.${b64({ ...decode(payload), sub: randomUUID() })}.${signature}`;
    },
  ],
  [
    'payload tampered (an expired token given a new exp), signature kept',
    () => {
      const [header, payload, signature] = parts(signed({ exp: nowSeconds() - 120 }));
      return `${header}.${b64({ ...decode(payload), exp: nowSeconds() + 3600 })}.${signature}`;
    },
  ],
  [
    'header tampered (typ changed), signature kept',
    () => {
      const [, payload, signature] = parts(signed());
      return `${b64({ ...m.header, typ: 'at+jwt' })}.${payload}.${signature}`;
    },
  ],
  [
    "another valid token's signature",
    () => {
      const [header, payload] = parts(signed({ jti: randomUUID() }));
      return `${header}.${payload}.${parts(signed({ jti: randomUUID() }))[2]}`;
    },
  ],
];

/** Authorization header values that present a token the way no valid request does. */
const malformedHeaders: [string, () => string][] = [
  // The contract: "Bearer missing or mis-cased ... Bearer error="invalid_token" where a token was sent".
  ['the Bearer scheme missing (the bare token)', () => signed()],
  ['the scheme in capitals (BEARER)', () => `BEARER ${signed()}`],
  ['the scheme mixed-case (bEaReR)', () => `bEaReR ${signed()}`],
  ['two spaces after Bearer', () => `Bearer  ${signed()}`],
  ['a trailing garbage word', () => `Bearer ${signed()} extra`],
];

const stable = (reply: Reply) => {
  const { type, title, status, detail, code } = reply.body as Json;
  return { type, title, status, detail, code };
};

let reference: ReturnType<typeof stable>;

describe('the positive controls: the test signs exactly as the pool does', () => {
  it('accepts a token signed with the pool key carrying the genuine claims of a registered user (200, their boards)', async () => {
    const genuine = await call('GET', '/boards', { token: m.user.token });
    const reSigned = await call('GET', '/boards', { token: signed() });
    expect(reSigned.status).toBe(200);
    expect(reSigned.body).toEqual(genuine.body);
  });

  it('accepts a token whose header is large but under the 8 KB limit, so the oversized case fails on size alone', async () => {
    const token = withLargeHeader(7 * 1024);
    expect(token.length).toBeGreaterThan(7 * 1024);
    expect(token.length).toBeLessThanOrEqual(8 * 1024);
    expect((await call('GET', '/boards', { token })).status).toBe(200);
  });

  it('the pool publishes exactly the key the tests sign with (the JWKS the service was handed)', async () => {
    const env = localEnv();
    const response = await fetch(`${env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER}/${env.USER_POOL_ID}/.well-known/jwks.json`);
    const jwks = (await response.json()) as { keys: Json[] };
    expect(jwks.keys).toEqual([
      expect.objectContaining({ kid: POOL_KID, alg: 'RS256', n: poolPrivate.jwk.n, e: poolPrivate.jwk.e }),
    ]);
  });

  it('the genuine emulator tokens from elsewhere are well-formed RS256 tokens with the pool kid', () => {
    for (const token of [m.otherClientToken, m.otherPoolToken]) {
      expect(decode(parts(token)[0])).toMatchObject({ alg: 'RS256', kid: POOL_KID });
      expect(decode(parts(token)[1])).toMatchObject({ token_use: 'access' });
    }
    expect(decode(parts(m.otherClientToken)[1])).toMatchObject({ sub: m.user.id, iss: m.issuer });
    expect(decode(parts(m.otherClientToken)[1]).client_id).not.toBe(m.clientId);
    expect(decode(parts(m.otherPoolToken)[1]).iss).not.toBe(m.issuer);
  });
});

describe('forged tokens: 401, one body, WWW-Authenticate Bearer error="invalid_token"', () => {
  beforeAll(async () => {
    reference = stable(await call('GET', '/boards', { headers: { authorization: 'Bearer not.a.token' } }));
    expect(reference).toMatchObject({ status: 401, detail: expect.any(String) });
  });

  const check = async (authorization: string) => {
    const reply = await call('GET', '/boards', { headers: { authorization } });
    expectProblem(reply, 401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(stable(reply)).toEqual(reference);
    // Nor can it delete the board of the user it names.
    const write = await call('DELETE', `/boards/${victimBoard.id}`, { headers: { authorization } });
    expectProblem(write, 401);
    expect(stable(write)).toEqual(reference);
  };

  it.each(forgeries)('%s', async (_name, forge) => {
    await check(`Bearer ${forge()}`);
  });

  it.each(malformedHeaders)('Authorization with %s', async (_name, header) => {
    await check(header());
  });

  it('the victim board survived every forged delete', async () => {
    const tree = await call('GET', `/boards/${victimBoard.id}`, { token: m.user.token });
    expect(tree.status).toBe(200);
    expect(tree.body).toMatchObject({ id: victimBoard.id, title: victimBoard.title });
  });
});
