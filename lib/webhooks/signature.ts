import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook signatures as the Standard Webhooks specification (standardwebhooks.com) defines them, so
 * that any of its published verifiers accepts a delivery (docs/reference.md, "Webhooks"):
 * - `webhook-id`: the delivery's id, the same on every attempt;
 * - `webhook-timestamp`: the attempt's time, in Unix seconds;
 * - `webhook-signature`: `v1,<base64 of HMAC-SHA256 over "<id>.<timestamp>.<body>">` keyed with the
 *   secret's decoded bytes, one per signing secret, space-separated (two for 24 hours after a rotation).
 * Secrets are `whsec_` and the base64 of 32 random bytes. Pure functions over node:crypto: no I/O,
 * and nothing here logs or returns a secret but `newSecret`.
 */

const SECRET_PREFIX = 'whsec_';
/** Random bytes per secret (the specification asks for 24 to 64; the spec for 32). */
const SECRET_BYTES = 32;
/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** A new signing secret: `whsec_` and the base64 of 32 bytes from the system's CSPRNG. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** Whether a value is a secret of this service's form (`whsec_`, then exactly 32 bytes in canonical base64). */
export function isSecret(value: unknown): value is string {
  return typeof value === 'string' && SECRET_PATTERN.test(value);
}

/**
 * The key of a `whsec_` secret: its base64 decoded. Any length the specification allows (24 to 64
 * bytes) signs, so its published test vector (a 24-byte secret) can be checked; anything else throws
 * (never naming the value): Buffer.from(…, 'base64') alone would decode garbage to some key and sign
 * with it.
 */
function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  const key = Buffer.from(encoded, 'base64');
  if (key.toString('base64') !== encoded || key.length < 24 || key.length > 64)
    throw new Error('not a whsec_ signing secret (base64 of 24 to 64 bytes)');
  return key;
}

/** Unix seconds of a moment, as `webhook-timestamp` carries it. */
function unixSeconds(at: Date): number {
  return Math.floor(at.getTime() / 1000);
}

/**
 * One signature, `v1,<base64>`, over `<id>.<timestamp>.<body>`. `body` must be the exact bytes sent
 * (a string is signed as its UTF-8 encoding, as fetch and http send it).
 */
export function sign(secret: string, id: string, timestamp: number, body: string | Uint8Array): string {
  const hmac = createHmac('sha256', keyOf(secret));
  hmac.update(`${id}.${timestamp}.`, 'utf8');
  hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of one attempt, signed with every secret given (newest first). */
export function signatureHeaders(attempt: {
  id: string;
  at: Date;
  body: string | Uint8Array;
  secrets: readonly string[];
}): SignatureHeaders {
  if (attempt.secrets.length === 0) throw new Error('a delivery needs at least one signing secret');
  const timestamp = unixSeconds(attempt.at);
  return {
    'webhook-id': attempt.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': attempt.secrets.map((secret) => sign(secret, attempt.id, timestamp, attempt.body)).join(' '),
  };
}

/** A webhook's secrets as stored (decrypted): the current one, and the one it replaced with when. */
export interface SecretState {
  readonly secret: string;
  readonly previous_secret?: string | null;
  /** ISO 8601: when `secret` replaced `previous_secret`. */
  readonly rotated_at?: string | null;
}

/** The secrets that sign at a moment: the current one, and the previous one for 24 hours after a rotation. */
export function signingSecrets(state: SecretState, at: Date): string[] {
  const rotatedAt = state.rotated_at ? Date.parse(state.rotated_at) : Number.NaN;
  const overlapping = state.previous_secret && at.getTime() < rotatedAt + ROTATION_OVERLAP_MS;
  return overlapping ? [state.secret, state.previous_secret!] : [state.secret];
}

/**
 * The state after a rotation at `at`: a new current secret; the current one keeps signing for 24
 * hours. A second rotation within those hours drops the oldest at once: at most two ever sign, as
 * the spec's "two signatures" says.
 */
export function rotateSecret(state: SecretState, at: Date, fresh: string = newSecret()): SecretState {
  return { secret: fresh, previous_secret: state.secret, rotated_at: at.toISOString() };
}

/**
 * The `webhook-id` of one event for one webhook: derived, not drawn, so that the same event reaching
 * the delivery step twice (the table's stream delivers at least once) carries the same id and the
 * receiver drops the repeat. `msg_` and 22 characters of base64url (128 bits of SHA-256).
 */
export function deliveryId(webhookId: string, eventId: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(['webhook-delivery', webhookId, eventId]), 'utf8')
    .digest();
  return `msg_${digest.subarray(0, 16).toString('base64url')}`;
}
