import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { ENV, requireEnv } from '../runtime/config';
import { stopAtDeadline } from '../runtime/deadline';
import { sdkLogger } from '../runtime/logger';

/**
 * Webhook secrets at rest (docs/webhooks.md, "Secrets at rest"): only as KMS ciphertexts, each
 * bound by its encryption context to its webhook and board, so a ciphertext copied onto another
 * webhook's item does not decrypt there. The key is `WEBHOOK_KEY_ID` (KMS on AWS, the local
 * stand-in at AWS_ENDPOINT_URL_KMS on the local stack). Nothing here logs or returns a secret in an
 * error: KMS errors carry no plaintext, and the plaintext travels only in the returned value.
 */

const client = new KMSClient({ logger: sdkLogger });
stopAtDeadline(client);

let cachedKeyId: string | undefined;
/**
 * The key's id, read once per container. The functions that seal or open secrets call it at cold
 * start (their handler module's top level), so a missing WEBHOOK_KEY_ID fails the cold start, not a
 * later request.
 */
export const secretKeyId = () => (cachedKeyId ??= requireEnv(ENV.webhookKeyId));

export interface SecretOwner {
  webhookId: string;
  boardId: string;
}

const contextOf = (ids: SecretOwner) => ({ purpose: 'webhook-secret', webhook_id: ids.webhookId, board_id: ids.boardId });

/** Encrypts a secret's text (`whsec_…`) for one webhook: one KMS Encrypt. */
export async function sealSecret(secret: string, ids: SecretOwner): Promise<Uint8Array> {
  const answer = await client.send(
    new EncryptCommand({
      KeyId: secretKeyId(),
      Plaintext: Buffer.from(secret, 'utf8'),
      EncryptionContext: contextOf(ids),
    }),
  );
  if (!answer.CiphertextBlob) throw new Error('KMS Encrypt answered without a ciphertext');
  return answer.CiphertextBlob;
}

/** How long a decrypted secret stays in memory; a rotation writes a new ciphertext, so it is never stale. */
const CACHE_MS = 5 * 60 * 1000;
const CACHE_MAX = 1000;
const opened = new Map<string, { secret: string; until: number }>();

/**
 * Decrypts a webhook's secret: one KMS Decrypt, then from memory for 5 minutes (the delivery
 * worker opens the same webhook's secret for every delivery). Keyed by the ciphertext and the
 * webhook it is asked for, so the cache never answers for a context KMS would refuse.
 */
export async function openSecret(ciphertext: Uint8Array, ids: SecretOwner): Promise<string> {
  const cacheKey = `${ids.webhookId}\u0000${ids.boardId}\u0000${Buffer.from(ciphertext).toString('base64')}`;
  const now = Date.now();
  const hit = opened.get(cacheKey);
  if (hit && hit.until > now) return hit.secret;
  const answer = await client.send(
    new DecryptCommand({ KeyId: secretKeyId(), CiphertextBlob: ciphertext, EncryptionContext: contextOf(ids) }),
  );
  if (!answer.Plaintext) throw new Error('KMS Decrypt answered without a plaintext');
  const secret = Buffer.from(answer.Plaintext).toString('utf8');
  if (opened.size >= CACHE_MAX) {
    for (const [key, entry] of opened) if (entry.until <= now || opened.size >= CACHE_MAX) opened.delete(key);
  }
  opened.set(cacheKey, { secret, until: now + CACHE_MS });
  return secret;
}
