import { createSign, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';

/**
 * Real RS256 tokens signed with keys the test owns, so verification is exercised for real:
 * hand `jwks` to the verifier with cacheJwks, then sign whatever claims a case needs.
 */
export interface TestSigner {
  kid: string;
  jwks: { keys: Record<string, unknown>[] };
  privateKey: KeyObject;
  sign(claims: Record<string, unknown>, header?: Record<string, unknown>): string;
}

export function makeSigner(kid = `test-${randomUUID()}`): TestSigner {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    kid,
    privateKey,
    jwks: { keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] },
    sign: (claims, header = {}) => signJwt({ alg: 'RS256', typ: 'JWT', kid, ...header }, claims, privateKey),
  };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function signJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64(header)}.${b64(claims)}`;
  const signature = createSign('RSA-SHA256').update(input).sign(key).toString('base64url');
  return `${input}.${signature}`;
}

/** Claims of a Cognito access token for the given issuer and app client. */
export function accessClaims(issuer: string, clientId: string, overrides: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: randomUUID(),
    iss: issuer,
    client_id: clientId,
    token_use: 'access',
    scope: 'aws.cognito.signin.user.admin',
    auth_time: now,
    iat: now,
    exp: now + 3600,
    jti: randomUUID(),
    username: randomUUID(),
    ...overrides,
  };
}
