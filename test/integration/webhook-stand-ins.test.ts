import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { asFunction, enforceServiceActions } from '../../infra/local/iam';
import { LocalKms, type LocalKmsServer, startLocalKms } from '../../infra/local/kms';
import {
  LocalSqs,
  type LocalSqsServer,
  type QueueEventSource,
  startLocalSqs,
  startQueueEventSource,
} from '../../infra/local/sqs';
import { LOCAL_DEAD_LETTER_QUEUE, LOCAL_DELIVERIES_QUEUE } from '../../infra/local/stack';
import { deliveriesQueueSettings } from '../../infra/webhook-queue';
import type { FunctionRow, QueueConsumerRow } from '../../lib/routes';
import { fixtureState } from '../support/queue-consumer-fixture';
import { refusal } from '../support/sdk-refusal';
import { eventually } from '../support/wait';

/**
 * The local stack's SQS and KMS stand-ins (infra/local/sqs.ts, infra/local/kms.ts), driven by the
 * real @aws-sdk/client-sqs and @aws-sdk/client-kms as the handlers use them, each on its own
 * server in this process; the queue's event source with a fixture consumer
 * (test/support/queue-consumer-fixture.ts); the IAM stand-in's refusals; and the running local
 * stack's queue and key as global setup started them.
 */
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const region = 'us-east-1';

let sqsServer: LocalSqsServer;
let sqs: LocalSqs;
let client: SQSClient;
let kmsServer: LocalKmsServer;
let kms: KMSClient;
const keyDir = mkdtempSync(join(tmpdir(), 'task-board-kms-'));
const sources: QueueEventSource[] = [];

beforeAll(async () => {
  sqs = new LocalSqs();
  sqsServer = await startLocalSqs(sqs, 0);
  client = new SQSClient({ endpoint: sqsServer.endpoint, region, credentials });
  kmsServer = await startLocalKms(new LocalKms(keyDir), 0);
  kms = new KMSClient({ endpoint: kmsServer.endpoint, region, credentials });
});

afterAll(async () => {
  await Promise.all(sources.map((source) => source.stop()));
  client.destroy();
  kms.destroy();
  await sqsServer.close();
  await kmsServer.close();
  rmSync(keyDir, { recursive: true, force: true });
});

let queueCount = 0;
/** A fresh queue (and dead-letter queue) of its own for each test. */
function newQueue(settings: { visibility?: number; maxReceiveCount?: number; maxMessageBytes?: number } = {}) {
  const name = `test-${++queueCount}`;
  const deadLetters = `${name}-dlq`;
  sqs.createQueue({ name: deadLetters });
  const url = sqs.createQueue({
    name,
    visibilityTimeoutSeconds: settings.visibility ?? 30,
    maxMessageBytes: settings.maxMessageBytes,
    redrive: { deadLetterQueue: deadLetters, maxReceiveCount: settings.maxReceiveCount ?? 5 },
  });
  return { name, url, deadLetters, deadLettersUrl: sqs.queueUrl(deadLetters) };
}

const receive = (QueueUrl: string, options: { wait?: number; visibility?: number; max?: number } = {}) =>
  client.send(
    new ReceiveMessageCommand({
      QueueUrl,
      WaitTimeSeconds: options.wait ?? 0,
      VisibilityTimeout: options.visibility,
      MaxNumberOfMessages: options.max ?? 10,
      MessageSystemAttributeNames: ['All'],
    }),
  );

describe('SQS stand-in, through @aws-sdk/client-sqs', () => {
  it('sends, receives with the receive count and sent time, deletes', async () => {
    const { url } = newQueue();
    const before = Date.now();
    const sent = await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"webhook_id":"w"}' }));
    const { Messages } = await receive(url);
    expect(Messages).toHaveLength(1);
    expect(Messages![0]).toMatchObject({ MessageId: sent.MessageId, Body: '{"webhook_id":"w"}' });
    expect(Messages![0]!.Attributes).toMatchObject({ ApproximateReceiveCount: '1' });
    expect(Number(Messages![0]!.Attributes!.SentTimestamp)).toBeGreaterThanOrEqual(before);
    await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: Messages![0]!.ReceiptHandle }));
    expect(sqs.count(url.split('/').at(-1)!)).toBe(0);
    expect((await receive(url)).Messages).toBeUndefined();
  });

  it('holds a delayed message back until its delay has passed', async () => {
    const { url } = newQueue();
    const sentAt = Date.now();
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'later', DelaySeconds: 1 }));
    expect((await receive(url)).Messages).toBeUndefined();
    const attributes = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }),
    );
    expect(attributes.Attributes).toEqual({ ApproximateNumberOfMessagesDelayed: '1' });
    const { Messages } = await receive(url, { wait: 20 });
    expect(Messages?.[0]?.Body).toBe('later');
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(1000);
  });

  it('refuses a delay over 900 s as SQS does, and takes 900', async () => {
    const { url } = newQueue();
    expect(await refusal(client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 901 })))).toEqual({
      name: 'InvalidParameterValue',
      status: 400,
      message: 'Value 901 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.',
    });
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 900 }));
    expect(sqs.count(url.split('/').at(-1)!)).toBe(1);
  });

  it('hides a received message for its visibility timeout, then gives it again with a new receipt; a stale receipt deletes nothing', async () => {
    const { url, name } = newQueue();
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'again' }));
    const first = (await receive(url, { visibility: 1 })).Messages![0]!;
    expect((await receive(url)).Messages).toBeUndefined();
    const second = (await receive(url, { wait: 20 })).Messages![0]!;
    expect(second).toMatchObject({ MessageId: first.MessageId, Body: 'again' });
    expect(second.Attributes!.ApproximateReceiveCount).toBe('2');
    expect(second.ReceiptHandle).not.toBe(first.ReceiptHandle);
    await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first.ReceiptHandle }));
    expect(sqs.count(name)).toBe(1);
    await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: second.ReceiptHandle }));
    expect(sqs.count(name)).toBe(0);
  });

  it('makes a message visible again at once with ChangeMessageVisibility 0', async () => {
    const { url } = newQueue();
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'back' }));
    const taken = (await receive(url)).Messages![0]!;
    await client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: taken.ReceiptHandle, VisibilityTimeout: 0 }),
    );
    expect((await receive(url)).Messages?.[0]?.Body).toBe('back');
  });

  it('moves a message to the dead-letter queue on the receive after maxReceiveCount', async () => {
    const { url, deadLettersUrl, name, deadLetters } = newQueue({ maxReceiveCount: 2 });
    const sent = await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'poison' }));
    for (const count of ['1', '2']) {
      const { Messages } = await receive(url, { visibility: 0 });
      expect(Messages![0]!.Attributes!.ApproximateReceiveCount).toBe(count);
    }
    expect((await receive(url, { visibility: 0 })).Messages).toBeUndefined();
    expect(sqs.count(name)).toBe(0);
    expect(sqs.count(deadLetters)).toBe(1);
    const dead = (await receive(deadLettersUrl)).Messages![0]!;
    expect(dead).toMatchObject({ MessageId: sent.MessageId, Body: 'poison' });
  });

  it('refuses a message over 262,144 bytes with SQS error, and takes one of exactly that size', async () => {
    const { url, name } = newQueue();
    expect(await refusal(client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x'.repeat(262_145) })))).toEqual({
      name: 'InvalidParameterValue',
      status: 400,
      message: 'One or more parameters are invalid. Reason: Message must be shorter than 262144 bytes.',
    });
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'é'.repeat(131_072) }));
    expect(sqs.count(name)).toBe(1);
    const batch = [1, 2].map((i) => ({ Id: `m${i}`, MessageBody: 'x'.repeat(140_000) }));
    expect((await refusal(client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: batch })))).name).toBe(
      'BatchRequestTooLong',
    );
  });

  it('sends batches of up to 10 distinct ids, refusing others as SQS does', async () => {
    const { url, name } = newQueue();
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ Id: `m${i}`, MessageBody: `body ${i}` }));
    const sent = await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries(10) }));
    expect(sent.Successful).toHaveLength(10);
    expect(sent.Failed ?? []).toEqual([]);
    expect(sqs.count(name)).toBe(10);
    expect((await refusal(client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries(11) })))).name).toBe(
      'TooManyEntriesInBatchRequest',
    );
    expect(
      (await refusal(client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [...entries(2), ...entries(1)] })))).name,
    ).toBe('BatchEntryIdsNotDistinct');
    expect((await refusal(client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [] })))).name).toBe(
      'EmptyBatchRequest',
    );
    expect(sqs.count(name)).toBe(10);
  });

  it('answers QueueDoesNotExist for a queue it does not have, and finds its own by name', async () => {
    const { url, name } = newQueue();
    expect(await refusal(client.send(new SendMessageCommand({ QueueUrl: `${url}-nope`, MessageBody: 'x' })))).toMatchObject({
      name: 'QueueDoesNotExist',
      status: 400,
    });
    expect((await client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl).toBe(url);
  });
});

describe('SQS stand-in: kept across a restart', () => {
  it('keeps waiting and in-flight messages, with their receive counts, in its file', async () => {
    const file = join(keyDir, 'sqs.json');
    const before = new LocalSqs(file);
    before.createQueue({ name: 'kept' });
    const url = before.queueUrl('kept');
    before.sendMessage({ QueueUrl: url, MessageBody: 'waiting' });
    before.sendMessage({ QueueUrl: url, MessageBody: 'in flight' });
    const [first] = await before.receive('kept', 1, 0, 0);
    expect(first!.Body).toBe('waiting');
    before.flush();
    const after = new LocalSqs(file);
    after.createQueue({ name: 'kept' });
    expect(after.count('kept')).toBe(2);
    const again = await after.receive('kept', 10, 30, 0);
    expect(again.map((m) => [m.Body, m.Attributes.ApproximateReceiveCount])).toEqual([
      ['waiting', '2'],
      ['in flight', '1'],
    ]);
  });
});

describe("SQS stand-in's event source (Lambda's SQS trigger)", () => {
  const rowOf = (overrides: Partial<QueueConsumerRow>): QueueConsumerRow => ({
    id: `fixture.consumer${++queueCount}` as Lowercase<string>,
    entry: 'test/support/queue-consumer-fixture.ts',
    summary: 'fixture',
    table: [],
    cognito: [],
    timeoutSeconds: 10,
    batchSize: 10,
    maxReceiveCount: 5,
    maxConcurrency: 2,
    ...overrides,
  });
  const seen = (id: string) => fixtureState().records.filter((r) => r.id === id);
  const send = (url: string, messages: { id: string; action: string }[]) =>
    client.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: messages.map((m, i) => ({ Id: `e${i}`, MessageBody: JSON.stringify(m) })),
      }),
    );

  it('deletes what succeeded and brings back only the reported failures, after the visibility timeout', async () => {
    const queue = newQueue({ visibility: 1 });
    await send(queue.url, [
      { id: `${queue.name}-ok`, action: 'ok' },
      { id: `${queue.name}-retry`, action: 'fail-once' },
    ]);
    sources.push(await startQueueEventSource(sqs, queue.name, rowOf({})));
    await eventually(async () => {
      expect(seen(`${queue.name}-retry`).map((r) => r.receiveCount)).toEqual([1, 2]);
      expect(sqs.count(queue.name)).toBe(0);
    });
    expect(seen(`${queue.name}-ok`).map((r) => r.receiveCount)).toEqual([1]);
  });

  it('brings the whole batch back when the handler throws', async () => {
    const queue = newQueue({ visibility: 1 });
    await send(queue.url, [
      { id: `${queue.name}-ok`, action: 'ok' },
      { id: `${queue.name}-throw`, action: 'throw-once' },
    ]);
    sources.push(await startQueueEventSource(sqs, queue.name, rowOf({ maxConcurrency: 2 })));
    await eventually(async () => expect(sqs.count(queue.name)).toBe(0));
    expect(seen(`${queue.name}-ok`).map((r) => r.receiveCount)).toEqual([1, 2]);
    expect(seen(`${queue.name}-throw`).map((r) => r.receiveCount)).toEqual([1, 2]);
  });

  it('dead-letters a message that fails on every receive, after maxReceiveCount receives', async () => {
    const queue = newQueue({ visibility: 1, maxReceiveCount: 2 });
    await send(queue.url, [{ id: `${queue.name}-poison`, action: 'fail' }]);
    sources.push(await startQueueEventSource(sqs, queue.name, rowOf({ maxReceiveCount: 2 })));
    await eventually(async () => expect(sqs.count(queue.deadLetters)).toBe(1));
    expect(seen(`${queue.name}-poison`).map((r) => r.receiveCount)).toEqual([1, 2]);
    expect(sqs.count(queue.name)).toBe(0);
  });

  it('runs at most maxConcurrency invocations at once, batchSize messages each', async () => {
    const queue = newQueue();
    const state = fixtureState();
    state.peak = 0;
    const ids = Array.from({ length: 20 }, (_, i) => `${queue.name}-${i}`);
    for (let i = 0; i < ids.length; i += 10) {
      await send(
        queue.url,
        ids.slice(i, i + 10).map((id) => ({ id, action: 'ok' })),
      );
    }
    sources.push(await startQueueEventSource(sqs, queue.name, rowOf({ batchSize: 1, maxConcurrency: 3 })));
    await eventually(async () => expect(ids.filter((id) => seen(id).length === 1)).toHaveLength(20));
    expect(state.peak).toBeGreaterThanOrEqual(1);
    expect(state.peak).toBeLessThanOrEqual(3);
  });
});

describe('KMS stand-in, through @aws-sdk/client-kms', () => {
  const context = { purpose: 'webhook-secret', webhook_id: 'w1', board_id: 'b1' };

  it('encrypts and decrypts under its key with the encryption context, in any order of the pairs', async () => {
    const keyId = kmsServer.kms.keyArn;
    const sealed = await kms.send(
      new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from('whsec_secret'), EncryptionContext: context }),
    );
    expect(sealed.KeyId).toBe(keyId);
    const opened = await kms.send(
      new DecryptCommand({
        CiphertextBlob: sealed.CiphertextBlob,
        EncryptionContext: { board_id: 'b1', webhook_id: 'w1', purpose: 'webhook-secret' },
      }),
    );
    expect(Buffer.from(opened.Plaintext!).toString()).toBe('whsec_secret');
    expect(opened.KeyId).toBe(keyId);
  });

  it('refuses another context or a changed ciphertext with InvalidCiphertextException, an unknown key with NotFoundException', async () => {
    const sealed = await kms.send(
      new EncryptCommand({ KeyId: kmsServer.kms.keyId, Plaintext: Buffer.from('whsec_secret'), EncryptionContext: context }),
    );
    const other = { ...context, webhook_id: 'w2' };
    expect(
      await refusal(kms.send(new DecryptCommand({ CiphertextBlob: sealed.CiphertextBlob, EncryptionContext: other }))),
    ).toMatchObject({
      name: 'InvalidCiphertextException',
      status: 400,
    });
    expect(await refusal(kms.send(new DecryptCommand({ CiphertextBlob: sealed.CiphertextBlob })))).toMatchObject({
      name: 'InvalidCiphertextException',
    });
    const changed = Uint8Array.from(sealed.CiphertextBlob!);
    changed[changed.length - 1]! ^= 1;
    expect(await refusal(kms.send(new DecryptCommand({ CiphertextBlob: changed, EncryptionContext: context })))).toMatchObject({
      name: 'InvalidCiphertextException',
    });
    expect(
      await refusal(
        kms.send(new EncryptCommand({ KeyId: 'alias/nobody', Plaintext: Buffer.from('x'), EncryptionContext: context })),
      ),
    ).toMatchObject({ name: 'NotFoundException', status: 400 });
  });

  it('keeps its key in the data directory, readable by its owner only, across restarts', async () => {
    const sealed = await kms.send(
      new EncryptCommand({ KeyId: kmsServer.kms.keyArn, Plaintext: Buffer.from('kept'), EncryptionContext: context }),
    );
    expect(statSync(join(keyDir, 'kms-key.json')).mode & 0o777).toBe(0o600);
    const again = new LocalKms(keyDir);
    expect(again.keyArn).toBe(kmsServer.kms.keyArn);
    const opened = again.decrypt({
      CiphertextBlob: Buffer.from(sealed.CiphertextBlob!).toString('base64'),
      EncryptionContext: context,
    });
    expect(Buffer.from(opened.Plaintext, 'base64').toString()).toBe('kept');
  });
});

describe('IAM stand-in: SQS and KMS calls held to the row', () => {
  beforeAll(() => enforceServiceActions());
  const row = (extra: Partial<FunctionRow>): FunctionRow => ({
    id: 'fixture.role',
    entry: 'functions/fixture.ts',
    summary: 'fixture',
    table: [],
    cognito: [],
    ...extra,
  });

  it('refuses SendMessage to a function whose row has no queue action, and sends for one that has it', async () => {
    const { url, name } = newQueue();
    const denied = await refusal(
      asFunction(row({}), () => client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' }))),
    );
    expect(denied.name).toBe('AccessDeniedException');
    expect(sqs.count(name)).toBe(0);
    await asFunction(row({ queue: ['sqs:SendMessage'] }), () =>
      client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: 'a', MessageBody: 'x' }] })),
    );
    expect(sqs.count(name)).toBe(1);
    // Receiving is the event source's, not the function's.
    expect((await refusal(asFunction(row({ queue: ['sqs:SendMessage'] }), () => receive(url)))).name).toBe(
      'AccessDeniedException',
    );
  });

  it('refuses KMS calls without the row’s key action, or without the webhook-secret context', async () => {
    const input = { KeyId: kmsServer.kms.keyArn, Plaintext: Buffer.from('x') };
    const context = { purpose: 'webhook-secret', webhook_id: 'w', board_id: 'b' };
    expect(
      (
        await refusal(
          asFunction(row({ key: ['kms:Decrypt'] }), () => kms.send(new EncryptCommand({ ...input, EncryptionContext: context }))),
        )
      ).name,
    ).toBe('AccessDeniedException');
    expect(
      (
        await refusal(
          asFunction(row({ key: ['kms:Encrypt'] }), () =>
            kms.send(new EncryptCommand({ ...input, EncryptionContext: { webhook_id: 'w' } })),
          ),
        )
      ).name,
    ).toBe('AccessDeniedException');
    const sealed = await asFunction(row({ key: ['kms:Encrypt'] }), () =>
      kms.send(new EncryptCommand({ ...input, EncryptionContext: context })),
    );
    expect(sealed.CiphertextBlob).toBeDefined();
  });
});

describe('the running local stack', () => {
  const env = JSON.parse(readFileSync(join(process.env.TASK_BOARD_DATA_DIR!, 'local-env.json'), 'utf8')) as Record<
    string,
    string
  >;

  it('names the stand-ins, the queue and the key in local-env.json, and lets its own machine through the address check', () => {
    expect(env.AWS_ENDPOINT_URL_SQS).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(env.AWS_ENDPOINT_URL_KMS).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(env.WEBHOOK_QUEUE_URL).toBe(`${env.AWS_ENDPOINT_URL_SQS}/000000000000/${LOCAL_DELIVERIES_QUEUE}`);
    expect(env.WEBHOOK_KEY_ID).toMatch(/^arn:aws:kms:[a-z0-9-]+:000000000000:key\/[0-9a-f-]{36}$/);
    expect(env.WEBHOOK_ALLOW_HOSTS).toBe('127.0.0.1,localhost');
  });

  it("runs its deliveries queue as CDK does: the worker row's visibility timeout and receive count, 4 days, 256 KiB", async () => {
    const stackClient = new SQSClient({ endpoint: env.AWS_ENDPOINT_URL_SQS, region, credentials });
    try {
      const { Attributes } = await stackClient.send(
        new GetQueueAttributesCommand({ QueueUrl: env.WEBHOOK_QUEUE_URL, AttributeNames: ['All'] }),
      );
      const settings = deliveriesQueueSettings();
      expect(Attributes).toMatchObject({
        VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(4 * 24 * 3600),
        MaximumMessageSize: '262144',
      });
      expect(JSON.parse(Attributes!.RedrivePolicy!)).toEqual({
        deadLetterTargetArn: expect.stringMatching(new RegExp(`:${LOCAL_DEAD_LETTER_QUEUE}$`)),
        maxReceiveCount: settings.maxReceiveCount,
      });
    } finally {
      stackClient.destroy();
    }
  });
});
