import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { accessTokenVerifier } from '../../lib/auth/verifier';
import { apiEvent } from '../support/events';
import { throttled } from '../support/sdk-failures';
import { accessClaims, makeSigner } from '../support/tokens';

/**
 * The rate limiter against a mocked table (aws-sdk-client-mock): what DynamoDB Local cannot show
 * on demand. A store that throttles must not make the service unavailable (fail open, counted in
 * the RateLimitFailOpen metric); a refused request sends no write but the counter's; the count is
 * sent beside the route's first read, not before it.
 */

// Quotas are read at cold start, and metrics are on here to see the fail-open count: set both
// before the handlers are loaded (below, in beforeAll).
process.env.RATE_LIMIT_REQUESTS = '5';
process.env.AUTH_RATE_LIMIT_REQUESTS = '3';
process.env.RATE_LIMIT_WINDOW_SECONDS = '60';
process.env.METRICS_DISABLED = 'false';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
let me: Handler;
let rename: Handler;

const signer = makeSigner();
const ddb = mockClient(DynamoDBDocumentClient);
// A new caller for each test: a function instance remembers the windows it saw refused.
let userId: string;
let token: string;
let profile: Record<string, unknown>;
const context = { getRemainingTimeInMillis: () => 10_000 } as Context;

/** The EMF lines written while `run` runs, by metric name. */
async function metricsDuring<T>(run: () => Promise<T>): Promise<{ result: T; metrics: string[] }> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: any[]) => {
    const text = chunk.toString();
    if (text.includes('"CloudWatchMetrics"')) lines.push(text);
    else return write(chunk, ...rest);
    return true;
  });
  try {
    const result = await run();
    const metrics = lines.flatMap((line) =>
      JSON.parse(line)._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name),
    );
    return { result, metrics };
  } finally {
    spy.mockRestore();
  }
}

const isCounter = (input: { Key?: Record<string, unknown> }) => String(input.Key?.pk).startsWith('RATE#');

beforeAll(async () => {
  accessTokenVerifier.cacheJwks(signer.jwks as any);
  me = (await import('../../functions/auth/me')).handler as unknown as Handler;
  rename = (await import('../../functions/boards/rename')).handler as unknown as Handler;
});
beforeEach(() => {
  ddb.reset();
  userId = randomUUID();
  token = signer.sign(accessClaims(process.env.TOKEN_ISSUER!, process.env.USER_POOL_CLIENT_ID!, { sub: userId }));
  profile = { pk: `USER#${userId}`, sk: '#PROFILE', user_id: userId, email: 'ada@example.test', display_name: 'Ada' };
});
afterAll(() => ddb.restore());

describe('when the counter store fails', () => {
  it('serves the request uncounted, without RateLimit fields, and counts RateLimitFailOpen', async () => {
    ddb.on(UpdateCommand).rejects(throttled());
    ddb.on(BatchGetCommand).resolves({ Responses: { [process.env.TABLE_NAME!]: [profile] } });
    const { result, metrics } = await metricsDuring(() => me(apiEvent(token, 'GET', '/auth/me'), context));
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!)).toMatchObject({ id: userId, email: 'ada@example.test' });
    expect(result.headers).not.toHaveProperty('ratelimit');
    expect(result.headers).not.toHaveProperty('ratelimit-policy');
    expect(metrics).toContain('RateLimitFailOpen');
  });

  it('still answers the route its own error (a failure of the route is not hidden)', async () => {
    ddb.on(UpdateCommand).rejects(new Error('socket hang up'));
    ddb.on(BatchGetCommand).resolves({ Responses: { [process.env.TABLE_NAME!]: [] } });
    const { result, metrics } = await metricsDuring(() => me(apiEvent(token, 'GET', '/auth/me'), context));
    // No profile: a deleted account's token, 401 as always; still uncounted.
    expect(result.statusCode).toBe(401);
    expect(result.headers).not.toHaveProperty('ratelimit');
    expect(metrics).toContain('RateLimitFailOpen');
  });
});

describe('when the store answers', () => {
  it('puts the count in the fields: r is the quota less the window count', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { count: 2 } });
    ddb.on(BatchGetCommand).resolves({ Responses: { [process.env.TABLE_NAME!]: [profile] } });
    const result = await me(apiEvent(token, 'GET', '/auth/me'), context);
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['ratelimit-policy']).toBe('"user";q=5;w=60');
    expect(result.headers?.ratelimit).toMatch(/^"user";r=3;t=([1-9]|[1-5][0-9]|60)$/);
    const [count] = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    // One conditional increment of this user's item of the current fixed window, with a ttl.
    const windowStart = Math.floor(Date.now() / 60_000) * 60;
    expect(count).toMatchObject({
      Key: { pk: `RATE#user#${userId}`, sk: expect.stringMatching(/^#WINDOW#\d+$/) },
      ConditionExpression: 'attribute_not_exists(#count) OR #count < :quota',
      ExpressionAttributeValues: expect.objectContaining({ ':quota': 5, ':one': 1 }),
    });
    expect(Number(count!.Key!.sk.slice('#WINDOW#'.length)) % 60).toBe(0);
    expect(Math.abs(Number(count!.Key!.sk.slice('#WINDOW#'.length)) - windowStart)).toBeLessThanOrEqual(60);
  });

  it('refuses a board write over the quota with 429 and sends no write but the counter', async () => {
    const boardId = randomUUID();
    ddb.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'over', $metadata: {} }));
    ddb.on(BatchGetCommand).resolves({
      Responses: {
        [process.env.TABLE_NAME!]: [
          profile,
          {
            pk: `BOARD#${boardId}`,
            sk: '#BOARD',
            id: boardId,
            owner_id: userId,
            title: 'Old',
            created_at: '2026-01-01T00:00:00Z',
          },
          { pk: `BOARD#${boardId}`, sk: `#MEMBER#${userId}`, user_id: userId, role: 'owner' },
        ],
      },
    });
    const { result, metrics } = await metricsDuring(() =>
      rename(apiEvent(token, 'PATCH', `/boards/${boardId}`, { title: 'New' }, { id: boardId }), context),
    );
    expect(result.statusCode).toBe(429);
    expect(result.headers?.['content-type']).toBe('application/problem+json');
    const body = JSON.parse(result.body!);
    expect(body).toMatchObject({ status: 429, code: 'rate_limited', title: 'Too Many Requests' });
    const t = Number(/;t=(\d+)$/.exec(String(result.headers?.ratelimit))?.[1]);
    expect(result.headers?.ratelimit).toBe(`"user";r=0;t=${t}`);
    expect(result.headers?.['retry-after']).toBe(String(t));
    expect(metrics).toContain('RateLimited');
    // Only reads and the counter's (refused) increment reached the table.
    const writes = ddb.calls().filter((call) => !(call.args[0] instanceof BatchGetCommand));
    expect(writes.map((call) => (call.args[0] as UpdateCommand).input).every(isCounter)).toBe(true);
    expect(writes).toHaveLength(1);
  });

  it('refuses the rest of a refused window without another write: the count cannot go down within it', async () => {
    ddb.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'over', $metadata: {} }));
    ddb.on(BatchGetCommand).resolves({ Responses: { [process.env.TABLE_NAME!]: [profile] } });
    const first = await me(apiEvent(token, 'GET', '/auth/me'), context);
    const second = await me(apiEvent(token, 'GET', '/auth/me'), context);
    expect([first.statusCode, second.statusCode]).toEqual([429, 429]);
    expect(second.headers?.ratelimit).toMatch(/^"user";r=0;t=\d+$/);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
  });

  it("sends the count beside the route's first read: both are in flight before either answers", async () => {
    const boardId = randomUUID();
    const inFlight: string[] = [];
    const seenWhenAnswering: number[] = [];
    let release!: () => void;
    const bothSent = new Promise<void>((resolve) => {
      release = resolve;
    });
    const arrive = async (name: string) => {
      inFlight.push(name);
      if (inFlight.length === 2) release();
      // Neither answers until the other was sent; a sequential count would never get here
      // (bounded, so that a failure reads as one and not as a hang).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([bothSent, new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
      clearTimeout(timer);
      seenWhenAnswering.push(inFlight.length);
    };
    ddb.on(UpdateCommand).callsFake(async (input) => {
      if (isCounter(input)) {
        await arrive('count');
        return { Attributes: { count: 5 } };
      }
      return { Attributes: {} };
    });
    ddb.on(BatchGetCommand).callsFake(async () => {
      await arrive('access');
      return { Responses: { [process.env.TABLE_NAME!]: [profile] } };
    });
    const result = await rename(apiEvent(token, 'PATCH', `/boards/${boardId}`, { title: 'New' }, { id: boardId }), context);
    // Not a member of that board (no membership item): 403, counted as the last of the quota.
    expect(result.statusCode).toBe(403);
    expect(result.headers?.ratelimit).toMatch(/^"user";r=0;t=\d+$/);
    expect(inFlight.sort()).toEqual(['access', 'count']);
    // Each answered only once both were sent.
    expect(seenWhenAnswering).toEqual([2, 2]);
  });
});

describe('per address', () => {
  const fromAddress = (event: APIGatewayProxyEventV2, sourceIp: string) => {
    event.requestContext.http.sourceIp = sourceIp;
    return event;
  };

  it('counts a refused token against the source address, by its hash', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } });
    const result = await me(fromAddress(apiEvent('not-a-token', 'GET', '/auth/me'), '198.51.100.7'), context);
    expect(result.statusCode).toBe(401);
    expect(result.headers?.['ratelimit-policy']).toBe('"address";q=3;w=60');
    expect(result.headers?.ratelimit).toMatch(/^"address";r=2;t=\d+$/);
    const [count] = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(count!.Key!.pk).toMatch(/^RATE#address#[\w-]{43}$/);
    expect(JSON.stringify(count)).not.toContain('198.51.100.7');
  });

  const refusedAfterOne = () =>
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: { count: 3 } })
      .rejects(new ConditionalCheckFailedException({ message: 'over', $metadata: {} }));

  it('runs a login beside its count, and over the quota drops its tokens for the 429', async () => {
    const { credentialRoute } = await import('../../lib/http/credential-route');
    const { authLogin } = await import('../../lib/rows/auth');
    const signIn = jest.fn(async () => ({ status: 200, body: { token: 'a token', refresh_token: 'a refresh token' } }));
    const login = credentialRoute(authLogin, signIn) as unknown as Handler;
    const attempt = () =>
      login(
        fromAddress(
          {
            ...apiEvent('', 'POST', '/auth/login', { email: 'ada@example.test', password: 'a guess!' }),
            headers: { 'content-type': 'application/json' },
          },
          '203.0.113.9',
        ),
        context,
      );
    refusedAfterOne();
    const last = await attempt();
    expect(last.statusCode).toBe(200);
    expect(last.headers?.ratelimit).toMatch(/^"address";r=0;t=\d+$/);
    const refused = await attempt();
    expect(refused.statusCode).toBe(429);
    expect(JSON.parse(refused.body!)).toMatchObject({ code: 'rate_limited' });
    expect(refused.body).not.toContain('a token');
    expect(refused.body).not.toContain('a refresh token');
    // Beside the count, the refused login still reached Cognito (docs/rate-limits.md says what that costs).
    expect(signIn).toHaveBeenCalledTimes(2);
    // Once this instance saw the window refused, the rest of it is refused before any call.
    const again = await attempt();
    expect(again.statusCode).toBe(429);
    expect(signIn).toHaveBeenCalledTimes(2);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it('never runs a credential route behind the gate over its quota: a refused logout does not reach Cognito', async () => {
    const { credentialRoute } = await import('../../lib/http/credential-route');
    const { authLogout } = await import('../../lib/rows/auth');
    const revoke = jest.fn(async () => ({ status: 204 }));
    const logout = credentialRoute(authLogout, revoke) as unknown as Handler;
    const attempt = () =>
      logout(
        fromAddress(
          {
            ...apiEvent('', 'POST', '/auth/logout', { refresh_token: 'a-refresh-token' }),
            headers: { 'content-type': 'application/json' },
          },
          '203.0.113.10',
        ),
        context,
      );
    refusedAfterOne();
    expect((await attempt()).statusCode).toBe(204);
    const refused = await attempt();
    expect(refused.statusCode).toBe(429);
    expect(revoke).toHaveBeenCalledTimes(1);
  });

  it("runs a password reset's read beside its count, and over the quota its Cognito call never happens", async () => {
    const { credentialRoute } = await import('../../lib/http/credential-route');
    const { countGate } = await import('../../lib/http/rate-limit');
    const { authPasswordReset } = await import('../../lib/rows/auth');
    const read = jest.fn(async () => undefined);
    const confirm = jest.fn(async () => undefined);
    // The handler's shape (lib/auth/accounts.ts resetForgottenPassword): read, gate, then Cognito.
    const reset = credentialRoute(authPasswordReset, async () => {
      await read();
      await countGate()();
      await confirm();
      return { status: 204 };
    }) as unknown as Handler;
    const attempt = () =>
      reset(
        fromAddress(
          {
            ...apiEvent('', 'POST', '/auth/password/reset', {
              email: 'ada@example.test',
              code: '123456',
              new_password: 'a new password!',
            }),
            headers: { 'content-type': 'application/json' },
          },
          '203.0.113.11',
        ),
        context,
      );
    refusedAfterOne();
    expect((await attempt()).statusCode).toBe(204);
    const refused = await attempt();
    expect(refused.statusCode).toBe(429);
    expect(read).toHaveBeenCalledTimes(2);
    expect(confirm).toHaveBeenCalledTimes(1);
  });
});
