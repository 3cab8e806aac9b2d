import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { apiEvent } from '../support/events';
import { accessClaims, makeSigner } from '../support/tokens';

/**
 * The limiter adds no sequential round trip on the routes whose first call is not a
 * read: the real SDK clients (DynamoDB's and Cognito's) talk to a stub endpoint of this test,
 * which holds every request until the ones the route should send together have all arrived, and
 * records how many were in flight at once. A count sent one after the route's first call would
 * never have company: the stub then answers it alone (after a bound, so that a failure reads as
 * one rather than as a hang), and the peak says so. Nothing here measures time.
 */

process.env.RATE_LIMIT_REQUESTS = '5';
process.env.AUTH_RATE_LIMIT_REQUESTS = '3';
process.env.RATE_LIMIT_WINDOW_SECONDS = '60';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
const context = { getRemainingTimeInMillis: () => 10_000 } as Context;
const signer = makeSigner();

interface Call {
  /** DynamoDB or Cognito operation, from X-Amz-Target. */
  operation: string;
  body: any;
}
type Answer = { status?: number; body: unknown };

let server: Server;
let calls: Call[] = [];
let inFlight = 0;
let peak = 0;
/** How many requests the stub waits for before it answers any (the ones a route should send together). */
let together = 1;
let waiting: (() => void)[] = [];
let answer: (call: Call) => Answer = () => ({ body: {} });

function handle(req: IncomingMessage, res: ServerResponse) {
  let text = '';
  req.on('data', (chunk) => {
    text += chunk;
  });
  req.on('end', async () => {
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    // The app client's secret is read once per container, not per request: answered at once and
    // left out of the calls, so that each test sees what its request sends.
    if (operation === 'DescribeUserPoolClient') {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ UserPoolClient: { ClientSecret: 'the-client-secret' } }));
      return;
    }
    const call = { operation, body: JSON.parse(text || '{}') };
    calls.push(call);
    inFlight++;
    peak = Math.max(peak, inFlight);
    if (inFlight >= together) {
      for (const release of waiting.splice(0)) release();
      // The calls after the first ones come one at a time.
      together = 1;
    } else {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        timer = setTimeout(resolve, 2_000);
      });
      clearTimeout(timer);
    }
    inFlight--;
    const { status = 200, body } = answer(call);
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify(body));
  });
}

const dynamoError = (type: string, extra: Record<string, unknown> = {}): Answer => ({
  status: 400,
  body: { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: type, ...extra },
});

let login: Handler;
let refresh: Handler;
let createBoard: Handler;
let forgot: Handler;
let changePassword: Handler;
let tickets: Handler;
let verifyEmail: Handler;
let reset: Handler;

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The clients are made when the handlers are loaded: point them at the stub first.
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
  process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER = endpoint;
  const { accessTokenVerifier } = await import('../../lib/auth/verifier');
  accessTokenVerifier.cacheJwks(signer.jwks as any);
  login = (await import('../../functions/auth/login')).handler as unknown as Handler;
  refresh = (await import('../../functions/auth/refresh')).handler as unknown as Handler;
  forgot = (await import('../../functions/auth/password-forgot')).handler as unknown as Handler;
  changePassword = (await import('../../functions/auth/password-change')).handler as unknown as Handler;
  createBoard = (await import('../../functions/boards/create')).handler as unknown as Handler;
  verifyEmail = (await import('../../functions/auth/verify-email')).handler as unknown as Handler;
  reset = (await import('../../functions/auth/password-reset')).handler as unknown as Handler;
  process.env.SOCKET_URL = 'wss://socket.example.test/live';
  tickets = (await import('../../functions/realtime/tickets')).handler as unknown as Handler;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  calls = [];
  inFlight = 0;
  peak = 0;
  waiting = [];
});

let nextAddress = 1;
function loginEvent(password: string): APIGatewayProxyEventV2 {
  const event = apiEvent('', 'POST', '/auth/login', { email: 'ada@example.test', password });
  event.headers = { 'content-type': 'application/json' };
  // A new address each time: an instance remembers the windows it saw refused.
  event.requestContext.http.sourceIp = `198.51.100.${nextAddress++}`;
  return event;
}

const tokens = { AccessToken: 'header.claims.signature', ExpiresIn: 3600, RefreshToken: 'a-refresh-token', TokenType: 'Bearer' };

describe('POST /auth/login', () => {
  it('sends the count and the sign-in (AdminInitiateAuth) together', async () => {
    together = 2;
    answer = ({ operation }) =>
      operation === 'UpdateItem' ? { body: { Attributes: { count: { N: '1' } } } } : { body: { AuthenticationResult: tokens } };
    const reply = await login(loginEvent('the password'), context);
    expect(reply.statusCode).toBe(200);
    expect(JSON.parse(reply.body!)).toMatchObject({ token: tokens.AccessToken });
    expect(reply.headers?.ratelimit).toMatch(/^"address";r=2;t=\d+$/);
    expect(calls.map((call) => call.operation).sort()).toEqual(['AdminInitiateAuth', 'UpdateItem']);
    expect(peak).toBe(2);
  });

  it("over the quota answers 429 and drops Cognito's tokens", async () => {
    together = 2;
    answer = ({ operation }) =>
      operation === 'UpdateItem' ? dynamoError('ConditionalCheckFailedException') : { body: { AuthenticationResult: tokens } };
    const reply = await login(loginEvent('the password'), context);
    expect(reply.statusCode).toBe(429);
    expect(JSON.parse(reply.body!)).toMatchObject({ code: 'rate_limited' });
    expect(reply.body).not.toContain(tokens.AccessToken);
    expect(reply.body).not.toContain(tokens.RefreshToken);
    expect(reply.headers?.ratelimit).toMatch(/^"address";r=0;t=\d+$/);
    // What a refused login still costs: the Cognito call, made beside the count.
    expect(peak).toBe(2);
  });
});

describe('POST /auth/refresh', () => {
  it('sends the count and InitiateAuth together; over the quota drops the new token', async () => {
    together = 2;
    let refused = false;
    answer = ({ operation }) =>
      operation === 'UpdateItem'
        ? refused
          ? dynamoError('ConditionalCheckFailedException')
          : { body: { Attributes: { count: { N: '1' } } } }
        : { body: { AuthenticationResult: { AccessToken: tokens.AccessToken, ExpiresIn: 3600, TokenType: 'Bearer' } } };
    const event = () => {
      const refreshEvent = loginEvent('unused');
      refreshEvent.rawPath = '/auth/refresh';
      refreshEvent.routeKey = 'POST /auth/refresh';
      refreshEvent.requestContext.http.path = '/auth/refresh';
      refreshEvent.body = JSON.stringify({ refresh_token: 'a-refresh-token' });
      return refreshEvent;
    };
    const served = await refresh(event(), context);
    expect(served.statusCode).toBe(200);
    expect(JSON.parse(served.body!)).toMatchObject({ token: tokens.AccessToken });
    expect(peak).toBe(2);
    refused = true;
    peak = 0;
    together = 2;
    const over = await refresh(event(), context);
    expect(over.statusCode).toBe(429);
    expect(over.body).not.toContain(tokens.AccessToken);
    expect(peak).toBe(2);
  });
});

describe('routes that read first and change after (password forgot and change)', () => {
  const forgotEvent = () => {
    const event = loginEvent('unused');
    event.rawPath = '/auth/password/forgot';
    event.routeKey = 'POST /auth/password/forgot';
    event.requestContext.http.path = '/auth/password/forgot';
    event.body = JSON.stringify({ email: 'ada@example.test' });
    return event;
  };

  it('sends the count beside the first read, and the change only after both', async () => {
    together = 2;
    answer = ({ operation }) =>
      operation === 'UpdateItem' ? { body: { Attributes: { count: { N: '1' } } } } : { body: { Responses: {} } };
    const reply = await forgot(forgotEvent(), context);
    expect(reply.statusCode).toBe(202);
    expect(reply.headers?.ratelimit).toMatch(/^"address";r=2;t=\d+$/);
    expect(peak).toBe(2);
    expect(
      calls
        .slice(0, 2)
        .map((call) => call.operation)
        .sort(),
    ).toEqual(['BatchGetItem', 'UpdateItem']);
    expect(calls.map((call) => call.operation).at(-1)).toBe('ForgotPassword');
  });

  it('over the quota answers 429 after the read, and never reaches Cognito', async () => {
    together = 2;
    answer = ({ operation }) =>
      operation === 'UpdateItem' ? dynamoError('ConditionalCheckFailedException') : { body: { Responses: {} } };
    const reply = await forgot(forgotEvent(), context);
    expect(reply.statusCode).toBe(429);
    expect(calls.map((call) => call.operation).sort()).toEqual(['BatchGetItem', 'UpdateItem']);
  });

  it('a password change checks the password only once its count is in; refused, it calls no Cognito API', async () => {
    const userId = randomUUID();
    const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
    together = 2;
    answer = ({ operation, body }) => {
      if (operation === 'UpdateItem') return dynamoError('ConditionalCheckFailedException');
      const [table, { Keys }] = Object.entries(body.RequestItems)[0] as [string, any];
      const profile = { user_id: { S: userId }, email: { S: 'ada@example.test' }, display_name: { S: 'Ada' } };
      return { body: { Responses: { [table]: [{ ...Keys[0], ...profile }] } } };
    };
    const reply = await changePassword(
      apiEvent(token, 'POST', '/auth/password', { current_password: 'the old one', new_password: 'a new password!' }),
      context,
    );
    expect(reply.statusCode).toBe(429);
    expect(peak).toBe(2);
    expect(calls.map((call) => call.operation).sort()).toEqual(['BatchGetItem', 'UpdateItem']);
  });
});

const cognitoError = (type: string): Answer => ({ status: 400, body: { __type: type, message: type } });

/** A BatchGetItem's answer: `item` under the one key it asked for, or nothing found. */
const found = (body: any, item?: Record<string, unknown>): Answer => {
  const [table, { Keys }] = Object.entries(body.RequestItems)[0] as [string, any];
  return { body: { Responses: { [table]: item ? [{ ...Keys[0], ...item }] : [] } } };
};
const counted: Answer = { body: { Attributes: { count: { N: '1' } } } };
const operations = () => calls.map((call) => call.operation);
/** The first two calls (in flight together), then the rest in order. */
const inOrder = () => [operations().slice(0, 2).sort(), ...operations().slice(2)];

describe('POST /auth/verify-email: the account read beside the count, the code checked only after both', () => {
  const verifyEvent = (userId: string) => {
    const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
    return apiEvent(token, 'POST', '/auth/verify-email', { code: '123456' });
  };
  const profile = (userId: string) => ({
    user_id: { S: userId },
    email: { S: 'ada@example.test' },
    display_name: { S: 'Ada' },
    email_verified: { BOOL: false },
  });

  it('sends the count and the account read together, then VerifyUserAttribute, then the marking', async () => {
    const userId = randomUUID();
    together = 2;
    answer = ({ operation, body }) =>
      operation === 'UpdateItem' ? counted : operation === 'BatchGetItem' ? found(body, profile(userId)) : { body: {} };
    const reply = await verifyEmail(verifyEvent(userId), context);
    expect(reply.statusCode).toBe(204);
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=4;t=\d+$/);
    expect(peak).toBe(2);
    // The pair, then one of the code's tries taken, then the code, then the marking.
    expect(inOrder()).toEqual([['BatchGetItem', 'UpdateItem'], 'UpdateItem', 'VerifyUserAttribute', 'TransactWriteItems']);
  });

  it('over the quota answers 429 after the read and never sends the code to Cognito (it stays unused)', async () => {
    const userId = randomUUID();
    together = 2;
    answer = ({ operation, body }) =>
      operation === 'UpdateItem' ? dynamoError('ConditionalCheckFailedException') : found(body, profile(userId));
    const reply = await verifyEmail(verifyEvent(userId), context);
    expect(reply.statusCode).toBe(429);
    expect(JSON.parse(reply.body!)).toMatchObject({ code: 'rate_limited' });
    expect(peak).toBe(2);
    expect(operations().sort()).toEqual(['BatchGetItem', 'UpdateItem']);
  });

  it("a deleted account's token gets its 401 from the read, before any Cognito call", async () => {
    together = 2;
    answer = ({ operation, body }) => (operation === 'UpdateItem' ? counted : found(body));
    const reply = await verifyEmail(verifyEvent(randomUUID()), context);
    expect(reply.statusCode).toBe(401);
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=4;t=\d+$/);
    expect(operations().sort()).toEqual(['BatchGetItem', 'UpdateItem']);
  });

  it('a wrong code is 400 invalid_code and marks nothing', async () => {
    const userId = randomUUID();
    together = 2;
    answer = ({ operation, body }) =>
      operation === 'UpdateItem'
        ? counted
        : operation === 'BatchGetItem'
          ? found(body, profile(userId))
          : cognitoError('CodeMismatchException');
    const reply = await verifyEmail(verifyEvent(userId), context);
    expect(reply.statusCode).toBe(400);
    expect(JSON.parse(reply.body!)).toMatchObject({ code: 'invalid_code' });
    expect(inOrder()).toEqual([['BatchGetItem', 'UpdateItem'], 'UpdateItem', 'VerifyUserAttribute']);
  });
});

describe("POST /auth/password/reset: the address's owner read beside the count, the code checked only after both", () => {
  const resetEvent = (email = 'ada@example.test') => {
    const event = loginEvent('unused');
    event.rawPath = '/auth/password/reset';
    event.routeKey = 'POST /auth/password/reset';
    event.requestContext.http.path = '/auth/password/reset';
    event.body = JSON.stringify({ email, code: '123456', new_password: 'a new password!' });
    return event;
  };
  const owner = (userId: string) => ({
    user_id: { S: userId },
    email: { S: 'ada@example.test' },
    display_name: { S: 'Ada' },
    verified: { BOOL: false },
  });
  const signedOut = () => calls.filter((call) => call.operation === 'AdminUserGlobalSignOut').map((call) => call.body.Username);

  it('sends the count and the read together, then ConfirmForgotPassword, the marking and the sign-out', async () => {
    const userId = randomUUID();
    together = 2;
    answer = ({ operation, body }) =>
      operation === 'UpdateItem' ? counted : operation === 'BatchGetItem' ? found(body, owner(userId)) : { body: {} };
    const reply = await reset(resetEvent(), context);
    expect(reply.statusCode).toBe(204);
    expect(reply.headers?.ratelimit).toMatch(/^"address";r=2;t=\d+$/);
    expect(peak).toBe(2);
    // Last, beside each other: the sign-out, and the revocation of the account's personal tokens:
    // the profile's stamp (sessions from before may mint none), then the list (none here) to delete.
    const last = inOrder().slice(-3);
    expect([...inOrder().slice(0, -3), [...last].sort()]).toEqual([
      ['BatchGetItem', 'UpdateItem'],
      'UpdateItem',
      'ConfirmForgotPassword',
      'TransactWriteItems',
      ['AdminUserGlobalSignOut', 'Query', 'UpdateItem'],
    ]);
    expect(last.indexOf('UpdateItem')).toBeLessThan(last.indexOf('Query'));
    expect(signedOut()).toEqual([userId]);
  });

  it('over the quota answers 429 after the read: the code is never sent, so the password is unchanged', async () => {
    together = 2;
    answer = ({ operation, body }) =>
      operation === 'UpdateItem' ? dynamoError('ConditionalCheckFailedException') : found(body, owner(randomUUID()));
    const reply = await reset(resetEvent(), context);
    expect(reply.statusCode).toBe(429);
    expect(peak).toBe(2);
    expect(operations().sort()).toEqual(['BatchGetItem', 'UpdateItem']);
  });

  it('an unknown address is still answered by Cognito, 400 invalid_code as a wrong code, and nothing else is sent', async () => {
    together = 2;
    answer = ({ operation, body }) =>
      operation === 'UpdateItem' ? counted : operation === 'BatchGetItem' ? found(body) : cognitoError('UserNotFoundException');
    const reply = await reset(resetEvent('nobody@example.test'), context);
    expect(reply.statusCode).toBe(400);
    expect(JSON.parse(reply.body!)).toMatchObject({ code: 'invalid_code' });
    expect(inOrder()).toEqual([['BatchGetItem', 'UpdateItem'], 'ConfirmForgotPassword']);
  });

  it('the address changed hands between the read and the reset: the owner at the reset is marked and signed out', async () => {
    const before = randomUUID();
    const now = randomUUID();
    let reads = 0;
    let transactions = 0;
    together = 2;
    answer = ({ operation, body }) => {
      if (operation === 'UpdateItem') return counted;
      if (operation === 'BatchGetItem') return found(body, owner(reads++ === 0 ? before : now));
      // The first account's marking finds the address no longer its own.
      if (operation === 'TransactWriteItems' && transactions++ === 0)
        return dynamoError('TransactionCanceledException', {
          CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'ConditionalCheckFailed' }],
        });
      return { body: {} };
    };
    const reply = await reset(resetEvent(), context);
    expect(reply.statusCode).toBe(204);
    const sent = operations().slice(2);
    expect([...sent.slice(0, -3), sent.slice(-3).sort()]).toEqual([
      'UpdateItem',
      'ConfirmForgotPassword',
      'TransactWriteItems',
      'BatchGetItem',
      'TransactWriteItems',
      ['AdminUserGlobalSignOut', 'Query', 'UpdateItem'],
    ]);
    const marked = calls.filter((call) => call.operation === 'TransactWriteItems').at(-1)!.body.TransactItems;
    expect(marked[1].Update.ExpressionAttributeValues[':user']).toEqual({ S: now });
    expect(signedOut()).toEqual([now]);
  });

  it('the account was deleted between the read and the reset: 204, and no one is signed out', async () => {
    let reads = 0;
    together = 2;
    answer = ({ operation, body }) => {
      if (operation === 'UpdateItem') return counted;
      if (operation === 'BatchGetItem') return found(body, reads++ === 0 ? owner(randomUUID()) : undefined);
      if (operation === 'TransactWriteItems')
        return dynamoError('TransactionCanceledException', {
          CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'ConditionalCheckFailed' }],
        });
      return { body: {} };
    };
    const reply = await reset(resetEvent(), context);
    expect(reply.statusCode).toBe(204);
    expect(signedOut()).toEqual([]);
  });
});

describe('POST /boards', () => {
  const userId = randomUUID();
  const boardEvent = () => {
    const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
    return apiEvent(token, 'POST', '/boards', { title: 'Plans' });
  };
  const transactionOf = () => calls.find((call) => call.operation === 'TransactWriteItems')!.body;
  /** The answer to the counter's read (a strongly consistent BatchGetItem of its one key). */
  const counterRead = (item: Record<string, unknown>): Answer => {
    const read = calls.find((call) => call.operation === 'BatchGetItem')!.body;
    const [table, { Keys, ConsistentRead }] = Object.entries(read.RequestItems)[0] as [string, any];
    expect(ConsistentRead).toBe(true);
    return { body: { Responses: { [table]: [{ ...Keys[0], ...item }] } } };
  };

  it("counts in the create's own transaction, its count read beside it: one round trip", async () => {
    together = 2;
    answer = ({ operation }) => (operation === 'BatchGetItem' ? counterRead({ count: { N: '2' } }) : { body: {} });
    const reply = await createBoard(boardEvent(), context);
    expect(reply.statusCode).toBe(201);
    // The read came before the increment (no marker of this request): this request is the third.
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=2;t=\d+$/);
    expect(calls.map((call) => call.operation).sort()).toEqual(['BatchGetItem', 'TransactWriteItems']);
    expect(peak).toBe(2);
    const counter = transactionOf().TransactItems.at(-1).Update;
    expect(counter.Key.pk.S).toBe(`RATE#user#${userId}`);
    expect(counter.ConditionExpression).toBe('attribute_not_exists(#count) OR #count < :quota');
    expect(counter.ExpressionAttributeValues[':quota']).toEqual({ N: '5' });
  });

  it('reads its own increment when the read comes after it (the marker), without counting it twice', async () => {
    together = 2;
    answer = ({ operation }) => {
      if (operation !== 'BatchGetItem') return { body: {} };
      const marker = transactionOf().TransactItems.at(-1).Update.ExpressionAttributeValues[':marker'].S;
      return counterRead({ count: { N: '3' }, last_request: { S: marker } });
    };
    const reply = await createBoard(boardEvent(), context);
    expect(reply.statusCode).toBe(201);
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=2;t=\d+$/);
  });

  it('over the quota: the transaction is cancelled by the counter (its index), 429, and nothing else is sent', async () => {
    together = 2;
    answer = ({ operation }) =>
      operation === 'TransactWriteItems'
        ? dynamoError('TransactionCanceledException', {
            CancellationReasons: [
              { Code: 'None' },
              { Code: 'None' },
              { Code: 'None' },
              { Code: 'None' },
              { Code: 'None' },
              { Code: 'ConditionalCheckFailed' },
            ],
          })
        : { body: {} };
    const reply = await createBoard(boardEvent(), context);
    expect(reply.statusCode).toBe(429);
    expect(JSON.parse(reply.body!)).toMatchObject({ code: 'rate_limited' });
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=0;t=\d+$/);
    expect(calls.map((call) => call.operation).sort()).toEqual(['BatchGetItem', 'TransactWriteItems']);
    // The instance remembers the window: the next request is refused without a call.
    calls = [];
    const again = await createBoard(boardEvent(), context);
    expect(again.statusCode).toBe(429);
    expect(calls).toEqual([]);
  });

  it('with an Idempotency-Key, counts before the key is claimed: a refused request writes no claim', async () => {
    together = 1;
    const other = randomUUID();
    const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: other }));
    answer = ({ operation }) => (operation === 'UpdateItem' ? dynamoError('ConditionalCheckFailedException') : { body: {} });
    const event = apiEvent(token, 'POST', '/boards', { title: 'Plans' });
    event.headers['idempotency-key'] = randomUUID();
    const reply = await createBoard(event, context);
    expect(reply.statusCode).toBe(429);
    expect(calls.map((call) => call.operation)).toEqual(['UpdateItem']);
  });

  it("a transaction cancelled by another item (the account's check) is counted on its own, and answers its error", async () => {
    together = 1;
    const other = randomUUID();
    const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: other }));
    answer = ({ operation }) =>
      operation === 'TransactWriteItems'
        ? dynamoError('TransactionCanceledException', {
            CancellationReasons: [
              { Code: 'None' },
              { Code: 'None' },
              { Code: 'None' },
              { Code: 'None' },
              { Code: 'ConditionalCheckFailed' },
              { Code: 'None' },
            ],
          })
        : operation === 'UpdateItem'
          ? { body: { Attributes: { count: { N: '1' } } } }
          : { body: {} };
    const reply = await createBoard(apiEvent(token, 'POST', '/boards', { title: 'Plans' }), context);
    expect(reply.statusCode).toBe(401);
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=4;t=\d+$/);
    expect(calls.map((call) => call.operation)).toContain('UpdateItem');
  });
});

describe('POST /realtime/tickets', () => {
  const ticketEvent = (userId = randomUUID()) => {
    const token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
    return apiEvent(token, 'POST', '/realtime/tickets');
  };
  const transactionOf = () => calls.find((call) => call.operation === 'TransactWriteItems')!.body;
  const cancelledAt = (index: number): Answer =>
    dynamoError('TransactionCanceledException', {
      CancellationReasons: Array.from({ length: 4 }, (_, i) => ({ Code: i === index ? 'ConditionalCheckFailed' : 'None' })),
    });

  it("counts in the ticket's own transaction, its count read beside it: one round trip", async () => {
    const userId = randomUUID();
    together = 2;
    answer = ({ operation, body }) => {
      if (operation !== 'BatchGetItem') return { body: {} };
      const [table, { Keys, ConsistentRead }] = Object.entries(body.RequestItems)[0] as [string, any];
      expect(ConsistentRead).toBe(true);
      return { body: { Responses: { [table]: [{ ...Keys[0], count: { N: '1' } }] } } };
    };
    const reply = await tickets(ticketEvent(userId), context);
    expect(reply.statusCode).toBe(201);
    expect(JSON.parse(reply.body!).ticket).toEqual(expect.any(String));
    // The read came before the increment (no marker of this request): this request is the second.
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=3;t=\d+$/);
    // No UpdateItem of its own: the count is the transaction's last item, sent with the read.
    expect(calls.map((call) => call.operation).sort()).toEqual(['BatchGetItem', 'TransactWriteItems']);
    expect(peak).toBe(2);
    const items = transactionOf().TransactItems;
    expect(items).toHaveLength(4);
    const counter = items[3].Update;
    expect(counter.Key.pk.S).toBe(`RATE#user#${userId}`);
    expect(counter.ConditionExpression).toBe('attribute_not_exists(#count) OR #count < :quota');
  });

  it('over the quota: the transaction is cancelled by the counter (its index), 429 with no ticket, and nothing else is sent', async () => {
    together = 2;
    const event = ticketEvent();
    answer = ({ operation }) => (operation === 'TransactWriteItems' ? cancelledAt(3) : { body: {} });
    const reply = await tickets(event, context);
    expect(reply.statusCode).toBe(429);
    expect(JSON.parse(reply.body!)).toEqual(expect.objectContaining({ code: 'rate_limited' }));
    expect(JSON.parse(reply.body!).ticket).toBeUndefined();
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=0;t=\d+$/);
    expect(calls.map((call) => call.operation).sort()).toEqual(['BatchGetItem', 'TransactWriteItems']);
    // The instance remembers the window: the next request is refused without a call.
    calls = [];
    const again = await tickets(event, context);
    expect(again.statusCode).toBe(429);
    expect(calls).toEqual([]);
  });

  it("a transaction cancelled by another item (the account's check) is counted on its own, and answers its error", async () => {
    together = 1;
    answer = ({ operation }) =>
      operation === 'TransactWriteItems'
        ? cancelledAt(2)
        : operation === 'UpdateItem'
          ? { body: { Attributes: { count: { N: '1' } } } }
          : { body: {} };
    const reply = await tickets(ticketEvent(), context);
    expect(reply.statusCode).toBe(401);
    expect(reply.headers?.ratelimit).toMatch(/^"user";r=4;t=\d+$/);
    expect(calls.map((call) => call.operation)).toContain('UpdateItem');
  });
});
