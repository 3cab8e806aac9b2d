import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { openSecret, sealSecret, secretKeyId } from '../../lib/data/webhook-secrets';
import { ENV } from '../../lib/runtime/config';

/**
 * lib/data/webhook-secrets.ts against a stubbed KMS: what each call asks KMS for (the key, the
 * encryption context that binds a ciphertext to its webhook), the in-memory cache of opened secrets,
 * and the failure paths (KMS refusing, or answering without a value), where nothing may carry the
 * secret. The real round trip runs against the local KMS stand-in in the integration tests.
 */

// Read on first use: the unit environment may not name a key.
process.env[ENV.webhookKeyId] ??= 'alias/unit-test-webhook-secrets';

const kms = mockClient(KMSClient);
afterAll(() => kms.restore());
beforeEach(() => kms.reset());

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const ids = { webhookId: '0b6f2e1c-4a7d-4a8e-9c1b-2f3e4d5c6b7a', boardId: '9b2f6c1e-4d3a-4f5b-8c7d-1e2f3a4b5c6d' };
const context = { purpose: 'webhook-secret', webhook_id: ids.webhookId, board_id: ids.boardId };

describe('sealSecret', () => {
  it('encrypts under WEBHOOK_KEY_ID with the webhook and its board as encryption context', async () => {
    kms.on(EncryptCommand).resolves({ CiphertextBlob: new Uint8Array([1, 2, 3]) });
    expect(await sealSecret(SECRET, ids)).toEqual(new Uint8Array([1, 2, 3]));
    const [call] = kms.commandCalls(EncryptCommand);
    expect(call!.args[0].input).toEqual({
      KeyId: process.env[ENV.webhookKeyId],
      Plaintext: Buffer.from(SECRET, 'utf8'),
      EncryptionContext: context,
    });
    expect(secretKeyId()).toBe(process.env[ENV.webhookKeyId]);
  });

  it('a KMS refusal reaches the caller as it is, without the secret', async () => {
    kms
      .on(EncryptCommand)
      .rejects(Object.assign(new Error('User is not authorized to perform kms:Encrypt'), { name: 'AccessDeniedException' }));
    const error = await sealSecret(SECRET, ids).catch((caught: Error) => caught);
    expect(error).toMatchObject({ name: 'AccessDeniedException' });
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('whsec_');
  });

  it('an answer without a ciphertext is an error, not an empty secret stored', async () => {
    kms.on(EncryptCommand).resolves({});
    await expect(sealSecret(SECRET, ids)).rejects.toThrow('without a ciphertext');
  });
});

describe('openSecret', () => {
  it('decrypts with the same key and context once, then answers from memory for the same ciphertext', async () => {
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from(SECRET, 'utf8') });
    const ciphertext = new Uint8Array([7, 7, 7, 1]);
    expect(await openSecret(ciphertext, ids)).toBe(SECRET);
    expect(await openSecret(ciphertext, ids)).toBe(SECRET);
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
    expect(kms.commandCalls(DecryptCommand)[0]!.args[0].input).toEqual({
      KeyId: process.env[ENV.webhookKeyId],
      CiphertextBlob: ciphertext,
      EncryptionContext: context,
    });
  });

  it('a new ciphertext (a rotation) or another webhook asks KMS again: the cache never answers for a context KMS would refuse', async () => {
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from(SECRET, 'utf8') });
    const ciphertext = new Uint8Array([7, 7, 7, 2]);
    await openSecret(ciphertext, ids);
    await openSecret(new Uint8Array([7, 7, 7, 3]), ids);
    kms
      .on(DecryptCommand)
      .rejects(Object.assign(new Error('InvalidCiphertextException'), { name: 'InvalidCiphertextException' }));
    await expect(openSecret(ciphertext, { ...ids, webhookId: '1b6f2e1c-4a7d-4a8e-9c1b-2f3e4d5c6b7a' })).rejects.toMatchObject({
      name: 'InvalidCiphertextException',
    });
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(3);
  });

  it('a failed decrypt is not cached: the next call asks KMS again', async () => {
    const ciphertext = new Uint8Array([7, 7, 7, 4]);
    kms.on(DecryptCommand).rejectsOnce(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    await expect(openSecret(ciphertext, ids)).rejects.toMatchObject({ name: 'ThrottlingException' });
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from(SECRET, 'utf8') });
    expect(await openSecret(ciphertext, ids)).toBe(SECRET);
  });

  it('an answer without a plaintext is an error', async () => {
    kms.on(DecryptCommand).resolves({});
    await expect(openSecret(new Uint8Array([7, 7, 7, 5]), ids)).rejects.toThrow('without a plaintext');
  });
});
