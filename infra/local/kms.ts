import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import * as kmsSdk from '@aws-sdk/client-kms';
import { AwsJsonError, type AwsJsonOperation, members, serializationError, startAwsJsonServer } from './aws-json-server';

/**
 * The local stack's stand-in for AWS KMS: the KMS JSON protocol (`x-amz-target:
 * TrentService.Encrypt|Decrypt`, `application/x-amz-json-1.1`) for one symmetric key, whose 256-bit
 * material lives in DATA_DIR (`kms-key.json`, created once with mode 0600, so secrets sealed before
 * a restart still open after it). Encrypt is AES-256-GCM with the encryption context as additional
 * authenticated data (its pairs sorted by key, so the order a caller writes them in does not
 * matter, as on KMS); the ciphertext blob names its key, so Decrypt needs no KeyId. A context that
 * differs from the one sealed with, or a changed blob, is refused with InvalidCiphertextException
 * (400) as KMS refuses it; an unknown KeyId is NotFoundException, a KeyId that is not the blob's
 * IncorrectKeyException. Not modelled: key policies and grants (the IAM stand-in holds each
 * function to its row's `key` actions), rotation (a real key keeps its old material to decrypt),
 * asymmetric keys and data keys. The blob's format is this stand-in's own, not KMS's. The HTTP side
 * is infra/local/aws-json-server.ts, shared with the SQS stand-in.
 */

const KMS_ACCOUNT = '000000000000';
const MAX_PLAINTEXT_BYTES = 4096;
const BLOB_VERSION = 1;
/**
 * The largest request read: far above any KMS request the stand-in takes (a 4 KiB plaintext is
 * 5.5 KB in base64, a ciphertext blob at most 8 KB, an encryption context and ten grant tokens
 * under 100 KB), so that only a body no KMS call could be is cut off.
 */
export const MAX_REQUEST_BYTES = 1_048_576;

/** A KMS error: its `__type` (KMS's JSON 1.1 answers name it without a namespace) and message. */
class KmsError extends AwsJsonError {}

interface KeyFile {
  keyId: string;
  material: string;
}

export class LocalKms {
  readonly keyId: string;
  readonly keyArn: string;
  readonly alias = 'alias/task-board-webhook-secrets';
  private readonly material: Buffer;

  /** Reads the key from `dataDir`, or makes it there once (mode 0600). */
  constructor(dataDir: string, region = process.env.AWS_REGION ?? 'us-east-1') {
    const file = join(dataDir, 'kms-key.json');
    if (!existsSync(file)) {
      const made: KeyFile = { keyId: randomUUID(), material: randomBytes(32).toString('base64') };
      try {
        writeFileSync(file, JSON.stringify(made), { mode: 0o600, flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    chmodSync(file, 0o600);
    const key = JSON.parse(readFileSync(file, 'utf8')) as KeyFile;
    this.keyId = key.keyId;
    this.material = Buffer.from(key.material, 'base64');
    if (this.material.length !== 32) throw new Error(`${file} does not hold a 256-bit key`);
    this.keyArn = `arn:aws:kms:${region}:${KMS_ACCOUNT}:key/${this.keyId}`;
  }

  /** Whether `id` names this key: its id, ARN, alias or alias ARN (anything else: NotFoundException). */
  private resolve(id: unknown): void {
    if (typeof id !== 'string' || id === '') throw new KmsError('ValidationException', 'KeyId is required.');
    const aliasArn = this.keyArn.replace(/key\/.*$/, this.alias);
    if (![this.keyId, this.keyArn, this.alias, aliasArn].includes(id)) {
      throw new KmsError('NotFoundException', `Key '${id}' does not exist`);
    }
  }

  encrypt(input: { KeyId?: string; Plaintext?: string; EncryptionContext?: Record<string, string> }) {
    this.resolve(input.KeyId);
    const plaintext = Buffer.from(members.string(input.Plaintext, 'Plaintext') ?? '', 'base64');
    if (plaintext.length < 1 || plaintext.length > MAX_PLAINTEXT_BYTES) {
      throw new KmsError(
        'ValidationException',
        `1 validation error detected: Value at 'plaintext' failed to satisfy constraint: Member must have length between 1 and ${MAX_PLAINTEXT_BYTES}`,
      );
    }
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.material, iv);
    cipher.setAAD(contextBytes(input.EncryptionContext));
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const id = Buffer.from(this.keyId, 'utf8');
    const blob = Buffer.concat([Buffer.from([BLOB_VERSION, id.length]), id, iv, cipher.getAuthTag(), sealed]);
    return { CiphertextBlob: blob.toString('base64'), KeyId: this.keyArn, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
  }

  decrypt(input: { KeyId?: string; CiphertextBlob?: string; EncryptionContext?: Record<string, string> }) {
    if (input.KeyId !== undefined) this.resolve(input.KeyId);
    // The context's shape is checked before the blob is opened: a wrong one is the request's
    // fault (SerializationException), not the ciphertext's.
    const context = contextBytes(input.EncryptionContext);
    const invalid = () => new KmsError('InvalidCiphertextException', '');
    const blob = Buffer.from(members.string(input.CiphertextBlob, 'CiphertextBlob') ?? '', 'base64');
    if (blob.length < 2 || blob[0] !== BLOB_VERSION) throw invalid();
    const idLength = blob[1]!;
    const id = blob.subarray(2, 2 + idLength).toString('utf8');
    const iv = blob.subarray(2 + idLength, 14 + idLength);
    const tag = blob.subarray(14 + idLength, 30 + idLength);
    const sealed = blob.subarray(30 + idLength);
    if (tag.length !== 16) throw invalid();
    if (id !== this.keyId) {
      if (input.KeyId !== undefined)
        throw new KmsError(
          'IncorrectKeyException',
          'The key ID in the request does not identify a CMK that can perform this operation.',
        );
      throw invalid();
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.material, iv);
      decipher.setAAD(context);
      decipher.setAuthTag(tag);
      const plaintext = Buffer.concat([decipher.update(sealed), decipher.final()]);
      return { Plaintext: plaintext.toString('base64'), KeyId: this.keyArn, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
    } catch {
      throw invalid();
    }
  }

  /** The operations served over HTTP (startLocalKms), by name. */
  readonly operations: Readonly<Record<string, AwsJsonOperation>> = {
    Encrypt: (input) => this.encrypt(input),
    Decrypt: (input) => this.decrypt(input),
  };
}

/** The encryption context as authenticated data: its pairs sorted by key, lengths prefixed (no ambiguity). */
function contextBytes(context: unknown): Buffer {
  const pairs = Object.entries(members.object<Record<string, unknown>>(context, 'EncryptionContext') ?? {}).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const parts: Buffer[] = [];
  for (const [key, value] of pairs) {
    if (typeof value !== 'string') throw serializationError(`EncryptionContext.${key} must be a string.`);
    for (const text of [key, value]) {
      const bytes = Buffer.from(text, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      parts.push(length, bytes);
    }
  }
  return Buffer.concat(parts);
}

export interface LocalKmsServer {
  kms: LocalKms;
  endpoint: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * Serves `kms` over HTTP on `port` (0: a free one) at `host`. A request body over
 * MAX_REQUEST_BYTES is refused unread (413); a smaller one gets KMS's own checks (a plaintext over
 * 4,096 bytes: ValidationException).
 */
export async function startLocalKms(kms: LocalKms, port: number, host = '127.0.0.1'): Promise<LocalKmsServer> {
  const served = await startAwsJsonServer(
    {
      name: 'local KMS',
      jsonVersion: '1.1',
      targetPrefix: 'TrentService',
      operations: kms.operations,
      maxBodyBytes: MAX_REQUEST_BYTES,
      sdk: kmsSdk,
      unimplemented: (message) => new KmsError('UnsupportedOperationException', message),
      internalErrorType: 'KMSInternalException',
    },
    port,
    host,
  );
  return { kms, ...served };
}
