import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncryptCommand, KMSClient, ListKeysCommand } from '@aws-sdk/client-kms';
import { GetQueueUrlCommand, PurgeQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AwsJsonError, type AwsJsonServer, startAwsJsonServer } from '../../infra/local/aws-json-server';
import { MAX_REQUEST_BYTES as KMS_MAX_REQUEST_BYTES, LocalKms, type LocalKmsServer, startLocalKms } from '../../infra/local/kms';
import { LocalSqs, type LocalSqsServer, MAX_REQUEST_BYTES as SQS_MAX_REQUEST_BYTES, startLocalSqs } from '../../infra/local/sqs';
import { refusal } from '../support/sdk-refusal';

/**
 * The HTTP side shared by the local SQS and KMS stand-ins (infra/local/aws-json-server.ts): what a
 * request that is not a well-formed call of the service's JSON protocol gets (another method or
 * content type, a body that is not a JSON object, a target the service does not have, a body over
 * the limit), each as AWS's front end answers it, with nothing run; then the same refusals through
 * the real @aws-sdk/client-sqs and @aws-sdk/client-kms against the two stand-ins, as the names the
 * SDK gives them (what a handler would catch). Every server here is in this process, on a free
 * port of 127.0.0.1, and closed at the end.
 */

const LIMIT = 1024;
const calls: string[] = [];
let toy: AwsJsonServer;

beforeAll(async () => {
  toy = await startAwsJsonServer(
    {
      name: 'toy service',
      jsonVersion: '1.0',
      targetPrefix: 'Toy_2026',
      queryCompatible: true,
      maxBodyBytes: LIMIT,
      internalErrorType: 'com.amazon.coral.service#InternalFailure',
      operations: {
        Echo: (input) => {
          calls.push('Echo');
          return { Echoed: input };
        },
        Refuse: () => {
          calls.push('Refuse');
          throw new AwsJsonError('com.example.toy#NoSuchThing', 'There is no such thing.', 400, 'Toy.NoSuchThing');
        },
        Break: () => {
          calls.push('Break');
          throw new Error('a bug');
        },
      },
      sdk: { LaterCommand: class {} },
      unimplemented: (message) => new AwsJsonError('com.example.toy#NotHere', message),
    },
    0,
  );
});

beforeEach(() => {
  calls.length = 0;
});

interface Raw {
  method?: string;
  type?: string;
  target?: string;
  body?: string | Buffer;
}

/** One request over plain HTTP: status, headers and body text. */
async function send(options: Raw, endpoint = toy.endpoint) {
  const headers: Record<string, string> = {};
  if (options.type !== undefined) headers['content-type'] = options.type;
  if (options.target !== undefined) headers['x-amz-target'] = options.target;
  const response = await fetch(`${endpoint}/`, { method: options.method ?? 'POST', headers, body: options.body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const call = (target: string, body: string | Buffer = '{}') => send({ type: 'application/x-amz-json-1.0', target, body });

describe('the shared AWS JSON-protocol server', () => {
  it('runs the named operation and answers its output as application/x-amz-json-1.0', async () => {
    const answer = await call('Toy_2026.Echo', '{"Name":"é"}');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/x-amz-json-1.0');
    expect(answer.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(answer.text)).toEqual({ Echoed: { Name: 'é' } });
    // An empty body is the empty input; parameters of the content type do not matter.
    expect((await send({ type: 'Application/X-Amz-Json-1.0; charset=utf-8', target: 'Toy_2026.Echo' })).status).toBe(200);
    expect(calls).toEqual(['Echo', 'Echo']);
  });

  it('answers another content type or method with 404 <UnknownOperationException/>, running nothing', async () => {
    for (const request of [
      { type: 'application/json', target: 'Toy_2026.Echo', body: '{}' },
      { type: 'application/x-amz-json-1.1', target: 'Toy_2026.Echo', body: '{}' },
      { type: 'application/x-www-form-urlencoded', target: 'Toy_2026.Echo', body: 'Action=Echo' },
      { target: 'Toy_2026.Echo', body: '{}' },
      { method: 'GET', type: 'application/x-amz-json-1.0', target: 'Toy_2026.Echo' },
      { method: 'PUT', type: 'application/x-amz-json-1.0', target: 'Toy_2026.Echo', body: '{}' },
    ]) {
      const answer = await send(request);
      expect({ request, status: answer.status, text: answer.text }).toEqual({
        request,
        status: 404,
        text: '<UnknownOperationException/>\n',
      });
    }
    expect(calls).toEqual([]);
  });

  it('answers a body that is not a JSON object with 400 SerializationException, running nothing', async () => {
    for (const body of ['{"Name":', 'not json', '[1,2]', '"text"', 'null', '7']) {
      const answer = await call('Toy_2026.Echo', body);
      expect({ body, status: answer.status, json: JSON.parse(answer.text) }).toEqual({
        body,
        status: 400,
        json: { __type: 'com.amazon.coral.service#SerializationException', message: expect.any(String) },
      });
      expect(answer.headers.get('content-type')).toBe('application/x-amz-json-1.0');
      expect(answer.headers.get('x-amzn-query-error')).toBe('SerializationException;Sender');
    }
    expect(calls).toEqual([]);
  });

  it('answers a target the service does not have with 400 UnknownOperationException', async () => {
    for (const target of ['Toy_2026.Nothing', 'Other_2026.Echo', 'Toy_2026', 'Toy_2026.', 'Echo', 'Toy_2026.constructor']) {
      const answer = await call(target);
      expect({ target, status: answer.status, type: JSON.parse(answer.text).__type }).toEqual({
        target,
        status: 400,
        type: 'com.amazon.coral.service#UnknownOperationException',
      });
      expect(answer.headers.get('x-amzn-query-error')).toBe('UnknownOperationException;Sender');
    }
    const none = await send({ type: 'application/x-amz-json-1.0', body: '{}' });
    expect(none.status).toBe(400);
    expect(JSON.parse(none.text)).toEqual({
      __type: 'com.amazon.coral.service#UnknownOperationException',
      message: 'The request has no x-amz-target.',
    });
    expect(calls).toEqual([]);
  });

  it("answers an operation the real service has but the stand-in lacks with the stand-in's own error", async () => {
    const answer = await call('Toy_2026.Later');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({
      __type: 'com.example.toy#NotHere',
      message: 'The toy service stand-in does not implement Toy_2026.Later.',
    });
  });

  it('answers a body over the limit with 413 and an empty body, unread and not run, by its length or as it streams', async () => {
    const exact = `{"Pad":"${'x'.repeat(LIMIT - 10)}"}`;
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    expect((await call('Toy_2026.Echo', exact)).status).toBe(200);
    calls.length = 0;

    const over = await call('Toy_2026.Echo', `{"Pad":"${'x'.repeat(LIMIT - 9)}"}`);
    expect({ status: over.status, text: over.text }).toEqual({ status: 413, text: '' });

    // Chunked, with no content-length: cut off once the limit is passed.
    const streamed = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(toy.endpoint);
      const request = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/',
          headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'Toy_2026.Echo' },
        },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      request.on('error', reject);
      request.write('{"Pad":"');
      for (let i = 0; i < 4; i++) request.write('x'.repeat(LIMIT / 2));
      request.end('"}');
    });
    expect(streamed).toEqual({ status: 413, text: '' });
    expect(calls).toEqual([]);
  });

  it("answers an operation's own error with its status, __type, message and query-compatible code", async () => {
    const answer = await call('Toy_2026.Refuse');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({ __type: 'com.example.toy#NoSuchThing', message: 'There is no such thing.' });
    expect(answer.headers.get('x-amzn-query-error')).toBe('Toy.NoSuchThing;Sender');
  });

  it('answers an unexpected failure with 500 and the internal error type, the fault the receiver’s', async () => {
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const answer = await call('Toy_2026.Break');
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.text)).toEqual({ __type: 'com.amazon.coral.service#InternalFailure', message: 'internal error' });
      expect(answer.headers.get('x-amzn-query-error')).toBe('InternalFailure;Receiver');
      expect(logged).toHaveBeenCalledWith('toy service failed', expect.any(Error));
    } finally {
      logged.mockRestore();
    }
  });

  it('ends an open call when it closes, and then listens no more', async () => {
    let started!: () => void;
    const open = new Promise<void>((resolve) => {
      started = resolve;
    });
    let aborted = false;
    const server = await startAwsJsonServer(
      {
        name: 'closing',
        jsonVersion: '1.1',
        targetPrefix: 'Closing',
        maxBodyBytes: LIMIT,
        internalErrorType: 'InternalFailure',
        operations: {
          Wait: (_input, signal) =>
            new Promise((resolve) => {
              signal.addEventListener('abort', () => {
                aborted = true;
                resolve({ Aborted: true });
              });
              started();
            }),
        },
      },
      0,
    );
    const pending = send({ type: 'application/x-amz-json-1.1', target: 'Closing.Wait', body: '{}' }, server.endpoint).catch(
      (error: Error) => error,
    );
    await open;
    await server.close();
    expect(aborted).toBe(true);
    await pending; // answered or cut off: either way it ends
    await expect(fetch(`${server.endpoint}/`, { method: 'POST' })).rejects.toThrow();
  });

  it('closes with a request whose body never comes, cutting it', async () => {
    const server = await startAwsJsonServer(
      {
        name: 'stalled',
        jsonVersion: '1.0',
        targetPrefix: 'Stalled',
        maxBodyBytes: LIMIT,
        internalErrorType: 'InternalFailure',
        operations: { Echo: (input) => input },
      },
      0,
    );
    const arrived = new Promise((resolve) => server.server.once('request', resolve));
    const url = new URL(server.endpoint);
    const socket = connect(Number(url.port), url.hostname);
    const cut = new Promise((resolve) => socket.on('close', resolve));
    socket.on('error', () => undefined);
    socket.write(
      'POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-amz-json-1.0\r\nx-amz-target: Stalled.Echo\r\ncontent-length: 100\r\n\r\n{"A":',
    );
    await arrived;
    await server.close();
    await cut;
  });
});

// ---------------------------------------------------------------------------------------------
// The real SDKs against the two stand-ins.

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const region = 'us-east-1';
let sqsServer: LocalSqsServer;
let sqs: SQSClient;
let kmsServer: LocalKmsServer;
let kms: KMSClient;
const keyDir = mkdtempSync(join(tmpdir(), 'task-board-aws-json-'));

beforeAll(async () => {
  sqsServer = await startLocalSqs(new LocalSqs(), 0);
  sqsServer.sqs.createQueue({ name: 'q' });
  sqs = new SQSClient({ endpoint: sqsServer.endpoint, region, credentials, maxAttempts: 1 });
  kmsServer = await startLocalKms(new LocalKms(keyDir), 0);
  kms = new KMSClient({ endpoint: kmsServer.endpoint, region, credentials, maxAttempts: 1 });
});

afterAll(async () => {
  sqs?.destroy();
  kms?.destroy();
  await Promise.all([toy?.close(), sqsServer?.close(), kmsServer?.close()]);
  rmSync(keyDir, { recursive: true, force: true });
});

type Sent = { headers: Record<string, string>; body: unknown };
type Step = (args: { request: unknown }) => Promise<unknown>;
type Stack = { add(middleware: (next: Step) => Step, options: { step: 'finalizeRequest'; name: string }): void };

/** A client of the same service whose every request is changed by `change` before it is sent. */
function tampered<C extends SQSClient | KMSClient>(make: () => C, change: (request: Sent) => void): C {
  const client = make();
  (client.middlewareStack as unknown as Stack).add(
    (next) => async (args) => {
      const request = args.request as Sent;
      change(request);
      if (typeof request.body === 'string') request.headers['content-length'] = String(Buffer.byteLength(request.body));
      return next(args);
    },
    { step: 'finalizeRequest', name: 'tamper' },
  );
  return client;
}

describe('through @aws-sdk/client-sqs, against the SQS stand-in', () => {
  const client = (change: Parameters<typeof tampered>[1]) =>
    tampered(() => new SQSClient({ endpoint: sqsServer.endpoint, region, credentials, maxAttempts: 1 }), change);

  it('names a target SQS does not have UnknownOperationException, one the stand-in lacks UnsupportedOperation', async () => {
    const bogus = client((request) => {
      request.headers['x-amz-target'] = 'AmazonSQS.FlushEverything';
    });
    try {
      expect(await refusal(bogus.send(new GetQueueUrlCommand({ QueueName: 'q' })))).toMatchObject({
        name: 'UnknownOperationException',
        status: 400,
      });
    } finally {
      bogus.destroy();
    }
    expect(await refusal(sqs.send(new PurgeQueueCommand({ QueueUrl: sqsServer.sqs.queueUrl('q') })))).toEqual({
      name: 'UnsupportedOperation',
      status: 400,
      message: 'The local SQS stand-in does not implement AmazonSQS.PurgeQueue.',
    });
  });

  it('names a body that is not JSON SerializationException, and sends nothing', async () => {
    const broken = client((request) => {
      request.body = '{"QueueUrl":';
    });
    try {
      expect(
        await refusal(broken.send(new SendMessageCommand({ QueueUrl: sqsServer.sqs.queueUrl('q'), MessageBody: 'x' }))),
      ).toMatchObject({
        name: 'SerializationException',
        status: 400,
      });
    } finally {
      broken.destroy();
    }
    expect(sqsServer.sqs.count('q')).toBe(0);
  });

  it("refuses a body over its limit with 413, unread; a smaller over-long message still gets SQS's own error", async () => {
    const url = sqsServer.sqs.queueUrl('q');
    const huge = await refusal(
      sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x'.repeat(SQS_MAX_REQUEST_BYTES) })),
    );
    expect(huge.status).toBe(413);
    expect(await refusal(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x'.repeat(262_145) })))).toMatchObject({
      name: 'InvalidParameterValue',
      status: 400,
    });
    expect(sqsServer.sqs.count('q')).toBe(0);
  });
});

describe('the SQS stand-in, closed', () => {
  it('writes its messages to its file when it closes, for the next start', async () => {
    const file = join(keyDir, 'closed-sqs.json');
    const before = new LocalSqs(file);
    before.createQueue({ name: 'kept' });
    const server = await startLocalSqs(before, 0);
    const client = new SQSClient({ endpoint: server.endpoint, region, credentials, maxAttempts: 1 });
    try {
      await client.send(new SendMessageCommand({ QueueUrl: before.queueUrl('kept'), MessageBody: 'kept' }));
    } finally {
      client.destroy();
    }
    await server.close();
    const after = new LocalSqs(file);
    after.createQueue({ name: 'kept' });
    expect(after.count('kept')).toBe(1);
  });
});

describe('members of the wrong JSON type, against the stand-ins over plain HTTP', () => {
  it('answers each with 400 SerializationException, never a 500, and changes nothing', async () => {
    const url = sqsServer.sqs.queueUrl('q');
    const sealed = kmsServer.kms.encrypt({
      KeyId: kmsServer.kms.keyArn,
      Plaintext: 'eA==',
      EncryptionContext: { a: 'b' },
    }).CiphertextBlob;
    const cases: [string, string, Record<string, unknown>][] = [
      [sqsServer.endpoint, 'AmazonSQS.SendMessageBatch', { QueueUrl: url, Entries: { Id: 'a', MessageBody: 'x' } }],
      [sqsServer.endpoint, 'AmazonSQS.SendMessageBatch', { QueueUrl: url, Entries: [null] }],
      [sqsServer.endpoint, 'AmazonSQS.SendMessageBatch', { QueueUrl: url, Entries: [{ Id: 'a', MessageBody: 5 }] }],
      [
        sqsServer.endpoint,
        'AmazonSQS.SendMessageBatch',
        {
          QueueUrl: url,
          Entries: [
            { Id: 'a', MessageBody: 'x' },
            { Id: 'b', MessageBody: { text: 'x' } },
          ],
        },
      ],
      [sqsServer.endpoint, 'AmazonSQS.DeleteMessageBatch', { QueueUrl: url, Entries: 'a' }],
      [sqsServer.endpoint, 'AmazonSQS.SendMessage', { QueueUrl: url, MessageBody: 'x', MessageAttributes: 5 }],
      [sqsServer.endpoint, 'AmazonSQS.SendMessage', { QueueUrl: url, MessageBody: ['x'] }],
      [sqsServer.endpoint, 'AmazonSQS.ReceiveMessage', { QueueUrl: url, AttributeNames: 'All' }],
      [sqsServer.endpoint, 'AmazonSQS.ReceiveMessage', { QueueUrl: url, MessageSystemAttributeNames: [1] }],
      [sqsServer.endpoint, 'AmazonSQS.GetQueueAttributes', { QueueUrl: url, AttributeNames: {} }],
      [kmsServer.endpoint, 'TrentService.Encrypt', { KeyId: kmsServer.kms.keyArn, Plaintext: 5 }],
      [kmsServer.endpoint, 'TrentService.Encrypt', { KeyId: kmsServer.kms.keyArn, Plaintext: 'eA==', EncryptionContext: [] }],
      [kmsServer.endpoint, 'TrentService.Decrypt', { CiphertextBlob: ['AAAA'] }],
      [
        kmsServer.endpoint,
        'TrentService.Encrypt',
        { KeyId: kmsServer.kms.keyArn, Plaintext: 'eA==', EncryptionContext: { a: 5 } },
      ],
      // A blob that opens with the right context: the wrong-typed context is the request's fault, not the blob's.
      [kmsServer.endpoint, 'TrentService.Decrypt', { CiphertextBlob: sealed, EncryptionContext: ['a'] }],
      [kmsServer.endpoint, 'TrentService.Decrypt', { CiphertextBlob: sealed, EncryptionContext: { a: 5 } }],
    ];
    for (const [endpoint, target, input] of cases) {
      const type = endpoint === kmsServer.endpoint ? 'application/x-amz-json-1.1' : 'application/x-amz-json-1.0';
      const answer = await send({ type, target, body: JSON.stringify(input) }, endpoint);
      expect({ target, input, status: answer.status, type: JSON.parse(answer.text).__type }).toEqual({
        target,
        input,
        status: 400,
        type: 'com.amazon.coral.service#SerializationException',
      });
    }
    expect(sqsServer.sqs.count('q')).toBe(0);
    expect(kmsServer.kms.decrypt({ CiphertextBlob: sealed, EncryptionContext: { a: 'b' } }).Plaintext).toBe('eA==');
  });

  it('refuses a receive before taking anything: the message stays receivable at once, its receive count unchanged', async () => {
    const local = sqsServer.sqs;
    local.createQueue({ name: 'r-dlq' });
    const url = local.createQueue({ name: 'r', redrive: { deadLetterQueue: 'r-dlq', maxReceiveCount: 1 } });
    local.sendMessage({ QueueUrl: url, MessageBody: 'kept' });
    for (const input of [{ AttributeNames: 'All' }, { MessageSystemAttributeNames: [1] }]) {
      const answer = await send(
        {
          type: 'application/x-amz-json-1.0',
          target: 'AmazonSQS.ReceiveMessage',
          body: JSON.stringify({ QueueUrl: url, ...input }),
        },
        sqsServer.endpoint,
      );
      expect({ status: answer.status, type: JSON.parse(answer.text).__type }).toEqual({
        status: 400,
        type: 'com.amazon.coral.service#SerializationException',
      });
    }
    const { Messages } = await local.receiveMessage({ QueueUrl: url, MessageSystemAttributeNames: ['ApproximateReceiveCount'] });
    expect(Messages?.map((m) => [m.Body, m.Attributes])).toEqual([['kept', { ApproximateReceiveCount: '1' }]]);
    expect(local.count('r-dlq')).toBe(0);
  });
});

describe('through @aws-sdk/client-kms, against the KMS stand-in', () => {
  const client = (change: Parameters<typeof tampered>[1]) =>
    tampered(() => new KMSClient({ endpoint: kmsServer.endpoint, region, credentials, maxAttempts: 1 }), change);
  const encrypt = () =>
    new EncryptCommand({ KeyId: kmsServer.kms.keyArn, Plaintext: Buffer.from('x'), EncryptionContext: { purpose: 'p' } });

  it('names a target KMS does not have UnknownOperationException, one the stand-in lacks UnsupportedOperationException', async () => {
    const bogus = client((request) => {
      request.headers['x-amz-target'] = 'TrentService.EncryptEverything';
    });
    try {
      expect(await refusal(bogus.send(encrypt()))).toMatchObject({ name: 'UnknownOperationException', status: 400 });
    } finally {
      bogus.destroy();
    }
    expect(await refusal(kms.send(new ListKeysCommand({})))).toEqual({
      name: 'UnsupportedOperationException',
      status: 400,
      message: 'The local KMS stand-in does not implement TrentService.ListKeys.',
    });
  });

  it('names a body that is not JSON SerializationException', async () => {
    const broken = client((request) => {
      request.body = '[';
    });
    try {
      expect(await refusal(broken.send(encrypt()))).toMatchObject({ name: 'SerializationException', status: 400 });
    } finally {
      broken.destroy();
    }
  });

  it("refuses a body over its limit with 413, unread; a smaller over-long plaintext still gets KMS's own error", async () => {
    const huge = await refusal(
      kms.send(
        new EncryptCommand({
          KeyId: kmsServer.kms.keyArn,
          Plaintext: Buffer.alloc(KMS_MAX_REQUEST_BYTES),
          EncryptionContext: { purpose: 'p' },
        }),
      ),
    );
    expect(huge.status).toBe(413);
    expect(
      await refusal(
        kms.send(
          new EncryptCommand({ KeyId: kmsServer.kms.keyArn, Plaintext: Buffer.alloc(4097), EncryptionContext: { purpose: 'p' } }),
        ),
      ),
    ).toMatchObject({ name: 'ValidationException', status: 400 });
  });
});
