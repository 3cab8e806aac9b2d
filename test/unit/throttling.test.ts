import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { HttpHandlerOptions, HttpRequest, HttpResponse, RequestHandler } from '@smithy/types';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { handler as listBoards } from '../../functions/boards/list';
import { handler as createCard } from '../../functions/cards/create';
import { handler as sweepSockets } from '../../functions/sockets/sweep';
import { accessTokenVerifier } from '../../lib/auth/verifier';
import { documentClient, tableName } from '../../lib/data/db';
import { keys } from '../../lib/data/table';
import { type RouteId, routes } from '../../lib/routes';
import { apiEvent } from '../support/events';
import { accessClaims, makeSigner } from '../support/tokens';
import { settle } from '../support/wait';

/**
 * DynamoDB throttling injected BELOW the SDK: the real DocumentClient that every handler shares
 * gets a fake HTTP request handler that answers as DynamoDB does when throttling (HTTP 400 with
 * the error type in `x-amzn-ErrorType` and `__type`). Serialisation, error parsing and the SDK's
 * own retry strategy (attempt count, backoff, retry quota) all run for real; only the wire is fake.
 */

// The SDK's throttling backoff is 1 s-based and grows per attempt; some cases run to the 10 s deadline.
jest.setTimeout(60_000);

const signer = makeSigner();
accessTokenVerifier.cacheJwks(signer.jwks as any);
const userId = randomUUID();
const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
const event = (method: string, path: string, body?: unknown, pathParameters?: Record<string, string>) =>
  apiEvent(token, method, path, body, pathParameters);

/** The route's function timeout, as CDK sets it (lib/routes.ts, default 10 s). */
const timeoutMsOf = (id: RouteId) => ((routes[id] as { timeoutSeconds?: number }).timeoutSeconds ?? 10) * 1000;

// --- the fake transport --------------------------------------------------------------------------

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

interface SeenRequest {
  operation: string;
  hostname: string;
  /** The SDK's own `amz-sdk-request` header: `attempt=N; max=M`, written by its retry middleware. */
  attemptHeader: string | undefined;
  invocationId: string | undefined;
  body: Record<string, any>;
  at: number;
}

const utf8 = new TextDecoder();

/** Stands in for NodeHttpHandler: records each request and answers from `answer`. */
class FakeDynamoDb implements RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions> {
  readonly requests: SeenRequest[] = [];
  constructor(private readonly answer: (request: SeenRequest, index: number) => Answer) {}

  async handle(request: HttpRequest): Promise<{ response: HttpResponse }> {
    // The SDK hands over bytes (a Uint8Array); decode them as bytes, as a real transport would.
    const text = typeof request.body === 'string' ? request.body : utf8.decode(request.body as Uint8Array | undefined);
    const seen: SeenRequest = {
      operation: String(request.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, ''),
      hostname: request.hostname,
      attemptHeader: request.headers['amz-sdk-request'],
      invocationId: request.headers['amz-sdk-invocation-id'],
      body: text ? JSON.parse(text) : {},
      at: Date.now(),
    };
    this.requests.push(seen);
    const { status, body, headers = {} } = this.answer(seen, this.requests.length - 1);
    const payload = Buffer.from(JSON.stringify(body));
    return {
      response: {
        statusCode: status,
        reason: undefined,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'content-length': String(payload.length),
          'x-amzn-requestid': randomUUID(),
          ...headers,
        },
        body: Readable.from([payload]),
      },
    };
  }

  updateHttpClientConfig(): void {}
  httpHandlerConfigs() {
    return {};
  }
  destroy(): void {}

  of(operation: string): SeenRequest[] {
    return this.requests.filter((r) => r.operation === operation);
  }
}

type ThrottleType = 'ProvisionedThroughputExceededException' | 'ThrottlingException';
const throttled = (type: ThrottleType = 'ProvisionedThroughputExceededException'): Answer => ({
  status: 400,
  headers: { 'x-amzn-ErrorType': `${type}:http://internal.amazon.com/coral/com.amazonaws.dynamodb.v20120810/` },
  body: {
    __type: `com.amazonaws.dynamodb.v20120810#${type}`,
    message: 'The level of configured provisioned throughput for the table was exceeded.',
  },
});

// --- a tiny table behind the fake: one board with one column, the caller its owner ---------------

const boardId = randomUUID();
const columnId = randomUUID();
const createdAt = '2026-01-02T03:04:05.000Z';
const S = (value: string) => ({ S: value });
const N = (value: number) => ({ N: String(value) });
const stored: Record<string, unknown>[] = [
  {
    ...keyOf(keys.board(boardId)),
    id: S(boardId),
    owner_id: S(userId),
    title: S('Survives throttling'),
    created_at: S(createdAt),
  },
  { ...keyOf(keys.member(boardId, userId)), board_id: S(boardId), user_id: S(userId), role: S('owner'), joined_at: S(createdAt) },
  // The caller's profile: the access check reads it with the membership (a deleted account has none).
  { ...keyOf(keys.userProfile(userId)), user_id: S(userId) },
  { ...keyOf(keys.column(boardId, columnId)), id: S(columnId), board_id: S(boardId), title: S('To do'), position: N(1) },
  { ...keyOf(keys.columnLookup(columnId)), board_id: S(boardId), card_version: N(0) },
];
function keyOf(key: { pk: string; sk: string }) {
  return { pk: S(key.pk), sk: S(key.sk) };
}

/** What DynamoDB answers when it is not throttling. */
function realAnswer(request: SeenRequest): Answer {
  const { body } = request;
  switch (request.operation) {
    case 'Query': {
      // The caller's memberships (GET /boards); any other query (a column's top card) is empty.
      const pk = body.ExpressionAttributeValues?.[':pk']?.S as string;
      const items = pk === keys.userPartition(userId) ? [{ board_id: S(boardId) }] : [];
      return { status: 200, body: { Items: items, Count: items.length, ScannedCount: items.length } };
    }
    case 'BatchGetItem': {
      const wanted = body.RequestItems[tableName()].Keys as { pk: { S: string }; sk: { S: string } }[];
      const found = stored.filter((item) =>
        wanted.some((k) => k.pk.S === (item.pk as { S: string }).S && k.sk.S === (item.sk as { S: string }).S),
      );
      return { status: 200, body: { Responses: { [tableName()]: found }, UnprocessedKeys: {} } };
    }
    case 'TransactWriteItems':
      return { status: 200, body: {} };
    default:
      return { status: 400, body: { __type: 'com.amazon.coral.validate#ValidationException', message: 'unexpected' } };
  }
}

// --- invoking the real handlers ------------------------------------------------------------------

/** A Lambda context whose deadline is `remainingMs` away, as Lambda hands it to the function. */
function lambdaContext(remainingMs: number): Context {
  const deadline = Date.now() + remainingMs;
  return { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => deadline - Date.now() } as unknown as Context;
}

const list = () => listBoards(event('GET', '/boards'), lambdaContext(timeoutMsOf('boards.list')));

function expectUnavailable(reply: APIGatewayProxyStructuredResultV2) {
  expect(reply.statusCode).toBe(503);
  expect(reply.headers).toMatchObject({
    'content-type': 'application/problem+json',
    'retry-after': expect.stringMatching(/^\d+$/),
  });
  expect(Number(reply.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(JSON.parse(reply.body ?? '{}')).toMatchObject({
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail: expect.any(String),
  });
  expect(reply.body).not.toMatch(/ProvisionedThroughput|Throttling|dynamodb|amazon|Abort/i);
}

// --- swapping the transport ----------------------------------------------------------------------

const config = documentClient.config as unknown as { requestHandler: unknown; maxAttempts: () => Promise<number> };
const originalHandler = config.requestHandler;

function install(answer: (request: SeenRequest, index: number) => Answer): FakeDynamoDb {
  const fake = new FakeDynamoDb(answer);
  config.requestHandler = fake;
  return fake;
}

/** Pins the SDK's backoff jitter (`Math.random() * base * 2^n`) so that delays are known. */
function pinJitter(value: number) {
  return jest.spyOn(Math, 'random').mockReturnValue(value);
}

afterEach(() => {
  config.requestHandler = originalHandler;
  jest.restoreAllMocks();
});

// --- the cases -----------------------------------------------------------------------------------

describe('DynamoDB throttling below the SDK', () => {
  it('the fake transport really replaces the one of the client the handlers use', async () => {
    const fake = install(realAnswer);
    const reply = await list();
    expect(reply.statusCode).toBe(200);
    expect(fake.requests.map((r) => r.operation)).toEqual(['Query', 'BatchGetItem']);
    expect(fake.requests[0]!.body).toMatchObject({ TableName: tableName(), ConsistentRead: true });
    expect(fake.requests[0]!.hostname).toMatch(/dynamodb/);
  });

  it('ProvisionedThroughputExceeded on every attempt: retried up to maxAttempts, then 503 with Retry-After inside the timeout', async () => {
    const maxAttempts = await config.maxAttempts();
    expect(maxAttempts).toBeGreaterThan(1);
    const fake = install(() => throttled('ProvisionedThroughputExceededException'));

    const startedAt = Date.now();
    const reply = await list();
    const elapsedMs = Date.now() - startedAt;

    // Retried by the SDK itself: one invocation, attempts numbered 1..maxAttempts, then given up.
    expect(fake.requests).toHaveLength(maxAttempts);
    expect(fake.requests.every((r) => r.operation === 'Query')).toBe(true);
    expect(new Set(fake.requests.map((r) => r.invocationId)).size).toBe(1);
    expect(fake.requests.map((r) => r.attemptHeader)).toEqual(
      Array.from({ length: maxAttempts }, (_, i) => `attempt=${i + 1}; max=${maxAttempts}`),
    );
    expectUnavailable(reply);
    // Functional bound: the answer exists before Lambda would stop the function.
    expect(elapsedMs).toBeLessThan(timeoutMsOf('boards.list'));
  });

  it('ThrottlingException on every attempt with the longest possible backoff: still 503 inside the timeout', async () => {
    const maxAttempts = await config.maxAttempts();
    pinJitter(0.999);
    const fake = install(() => throttled('ThrottlingException'));

    const startedAt = Date.now();
    const reply = await list();
    const elapsedMs = Date.now() - startedAt;

    expect(fake.requests).toHaveLength(maxAttempts);
    expect(new Set(fake.requests.map((r) => r.invocationId)).size).toBe(1);
    expectUnavailable(reply);
    expect(elapsedMs).toBeLessThan(timeoutMsOf('boards.list'));
  });

  it('throttling across several calls whose retries outlast the function timeout: 503 before the deadline', async () => {
    // Jitter 0.75: delays of 750, 1500, 3000 ms. The Query succeeds on its 4th attempt (5.25 s),
    // then BatchGetItem is throttled at 5.25, 6.0 and 7.5 s; its 4th attempt would be at 10.5 s.
    pinJitter(0.75);
    const fake = install((request) => {
      if (request.operation === 'Query' && fake.of('Query').length < 4) return throttled();
      if (request.operation === 'BatchGetItem') return throttled();
      return realAnswer(request);
    });
    const timeoutMs = timeoutMsOf('boards.list');

    const startedAt = Date.now();
    const reply = await list();
    const elapsedMs = Date.now() - startedAt;

    expectUnavailable(reply);
    expect(elapsedMs).toBeLessThan(timeoutMs);
    expect(fake.of('Query')).toHaveLength(4);
    expect(fake.of('BatchGetItem').length).toBeGreaterThanOrEqual(1);
    // A read still retrying after the answer is harmless; let it end on the fake before the swap back.
    const maxAttempts = await config.maxAttempts();
    await settle(() => fake.of('BatchGetItem').length >= maxAttempts, startedAt + 11_000);
  });

  it('throttling on the first attempt only: the SDK retry succeeds and the request is 200', async () => {
    const fake = install((request, index) => (index === 0 ? throttled() : realAnswer(request)));
    const reply = await list();

    expect(reply.statusCode).toBe(200);
    expect(JSON.parse(reply.body ?? '[]')).toEqual([
      { id: boardId, owner_id: userId, title: 'Survives throttling', created_at: createdAt },
    ]);
    expect(fake.requests.map((r) => r.operation)).toEqual(['Query', 'Query', 'BatchGetItem']);
    expect(fake.requests[0]!.invocationId).toBe(fake.requests[1]!.invocationId);
    expect(fake.requests.slice(0, 2).map((r) => r.attemptHeader?.split(';')[0])).toEqual(['attempt=1', 'attempt=2']);
  });

  it('a throttled write is not sent again after its 503 has been answered (no write the client was told failed)', async () => {
    // An invocation with 5 s left (deadline at ~4.5 s): the card's transaction is throttled at 0
    // and 1 s (jitter pinned: delays 999, 1998 ms), and the SDK's third attempt, due at ~3 s, would
    // succeed. It is not sent: a write starts only with WRITE_BUDGET_MS (3 s) left before the
    // deadline, so the request answers 503 with nothing in flight, and no attempt follows the 503
    // (in Lambda it would run when the frozen container thaws for some later request, and the
    // client, told 503, retries and gets a second card).
    pinJitter(0.999);
    const fake = install((request) =>
      request.operation === 'TransactWriteItems' && fake.of('TransactWriteItems').length < 3 ? throttled() : realAnswer(request),
    );
    const startedAt = Date.now();
    const reply = await createCard(
      event('POST', `/columns/${columnId}/cards`, { title: 'once' }, { id: columnId }),
      lambdaContext(5_000),
    );
    const answeredAt = Date.now();

    expectUnavailable(reply);
    expect(fake.of('TransactWriteItems').length).toBeGreaterThanOrEqual(1);
    // Had the third attempt been sent (~3 s), it would have succeeded: wait well past the deadline.
    await settle(() => fake.of('TransactWriteItems').length >= 3, startedAt + 7_000);
    const late = fake.requests.filter((r) => r.at > answeredAt).map((r) => `${r.operation} (${r.attemptHeader})`);
    expect(late).toEqual([]);
    expect(fake.of('TransactWriteItems')).toHaveLength(2);
  });

  it('throttling in the board-access check (before the handler) is also answered before the deadline', async () => {
    // Card create reads the column's lookup item in the membership check, which runs before the
    // handler. An invocation with 2 s left; jitter pinned: attempts at 0, 1.0, 3.0 and 7.0 s.
    pinJitter(0.999);
    const fake = install((request) => (request.operation === 'BatchGetItem' ? throttled() : realAnswer(request)));
    const remainingMs = 2_000;

    const startedAt = Date.now();
    const reply = await createCard(
      event('POST', `/columns/${columnId}/cards`, { title: 'never' }, { id: columnId }),
      lambdaContext(remainingMs),
    );
    const elapsedMs = Date.now() - startedAt;

    expectUnavailable(reply);
    expect(elapsedMs).toBeLessThan(remainingMs);
    expect(fake.of('TransactWriteItems')).toEqual([]);
    const maxAttempts = await config.maxAttempts();
    await settle(() => fake.of('BatchGetItem').length >= maxAttempts, startedAt + 3_500);
  });

  it('the expiry sweep, throttled past its time, fails at its deadline (not killed) and sends nothing after', async () => {
    // The sweeper's queries of the expiry buckets are throttled on every attempt (attempts at 0,
    // 1.0 and 3.0 s with the jitter pinned); the invocation has 2 s left. The run must end by
    // itself before Lambda would kill it, and no query may start once it has ended.
    pinJitter(0.999);
    const fake = install((request) => (request.operation === 'Query' ? throttled() : realAnswer(request)));
    const remainingMs = 2_000;

    const startedAt = Date.now();
    // It fails on its own terms (a function error, as a timeout was for the errors alarm).
    await expect(sweepSockets({}, lambdaContext(remainingMs))).rejects.toThrow(/ran out of time/);
    const endedAt = Date.now();

    expect(endedAt - startedAt).toBeLessThan(remainingMs);
    expect(fake.of('Query').length).toBeGreaterThanOrEqual(1);
    // The third attempt would be due at ~3.0 s; wait well past it.
    await settle(() => false, startedAt + 5_000);
    expect(fake.requests.filter((r) => r.at > endedAt)).toEqual([]);
  });

  it('the original transport is back after each case', () => {
    expect(config.requestHandler).toBe(originalHandler);
    expect((originalHandler as object).constructor.name).toBe('NodeHttpHandler');
  });
});
