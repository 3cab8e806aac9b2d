import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { withinGatewayLimits } from '../../infra/local/http-adapter';
import { type RouteRow, routes } from '../../lib/routes';
import { httpApiLimits, LONGEST_ROUTE_SECONDS, lambdaLimits } from '../../lib/runtime/aws-limits';

/**
 * The local adapter holds a function's answer to what the HTTP API does with
 * it on AWS. Over Lambda's 6 MB (counted on the JSON the function returns, a base64 body as its
 * text) the invocation fails and the gateway answers 500 with its own JSON; after the 30 s
 * integration timeout it answers 503. The request-size limit (10 MB → 413) is in
 * test/integration/gateway-limits.test.ts, over HTTP.
 */

const LIMIT = lambdaLimits.responseBytes;
const INTERNAL_ERROR = { gateway: { status: 500, body: '{"message":"Internal Server Error"}' } };
const UNAVAILABLE = { gateway: { status: 503, body: '{"message":"Service Unavailable"}' } };

/** How Lambda sizes an answer: the JSON the runtime sends back. */
const payloadBytes = (result: APIGatewayProxyStructuredResultV2) => Buffer.byteLength(JSON.stringify(result));

/** A plain-text answer whose JSON is exactly `bytes` long. */
function plainAnswerOf(bytes: number): APIGatewayProxyStructuredResultV2 {
  const shell: APIGatewayProxyStructuredResultV2 = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '' };
  const result = { ...shell, body: 'x'.repeat(bytes - payloadBytes(shell)) };
  expect(payloadBytes(result)).toBe(bytes);
  return result;
}

/** A base64 answer whose JSON is exactly `bytes` long (its text padded with the header's length). */
function base64AnswerOf(bytes: number): APIGatewayProxyStructuredResultV2 {
  const shell = (body: string, pad = ''): APIGatewayProxyStructuredResultV2 => ({
    statusCode: 200,
    headers: { 'content-type': 'application/json', 'content-encoding': 'br', 'x-pad': pad },
    body,
    isBase64Encoded: true,
  });
  const room = bytes - payloadBytes(shell(''));
  const text = Buffer.alloc(Math.floor(room / 4) * 3, 7).toString('base64');
  const result = shell(text, 'p'.repeat(room - text.length));
  expect(payloadBytes(result)).toBe(bytes);
  return result;
}

let consoleError: jest.SpyInstance;
beforeEach(() => {
  consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => {
  consoleError.mockRestore();
  jest.useRealTimers();
});

describe("a function answer over Lambda's 6 MB fails as on AWS", () => {
  it('the limit is 6 MB (6,291,456 bytes, what Lambda reports as its "maximum allowed payload size")', () => {
    expect(LIMIT).toBe(6_291_456);
  });

  it("one byte over → 500 with the gateway's own JSON body, not the function's", async () => {
    const outcome = await withinGatewayLimits(Promise.resolve(plainAnswerOf(LIMIT + 1)));
    expect(outcome).toEqual(INTERNAL_ERROR);
    expect(JSON.parse((outcome as typeof INTERNAL_ERROR).gateway.body)).toEqual({ message: 'Internal Server Error' });
    expect(consoleError).toHaveBeenCalledWith(expect.stringMatching(/6 MB/));
  });

  it('exactly at the limit, or below, passes through unchanged', async () => {
    for (const bytes of [LIMIT, LIMIT - 1, 1000]) {
      const result = plainAnswerOf(bytes);
      const outcome = await withinGatewayLimits(Promise.resolve(result));
      expect('result' in outcome && outcome.result).toBe(result);
    }
    expect(consoleError).not.toHaveBeenCalled();
  });

  it('a binary (base64) body counts as its base64 text, not as its decoded bytes', async () => {
    const over = base64AnswerOf(LIMIT + 1);
    // 4.5 MB of bytes: small enough decoded, too large as the text Lambda returns.
    expect(Buffer.from(over.body!, 'base64').length).toBeLessThan(LIMIT * 0.76);
    await expect(withinGatewayLimits(Promise.resolve(over))).resolves.toEqual(INTERNAL_ERROR);

    const at = base64AnswerOf(LIMIT);
    const outcome = await withinGatewayLimits(Promise.resolve(at));
    expect('result' in outcome && outcome.result).toBe(at);
  });

  it('the headers count too', async () => {
    const result = plainAnswerOf(LIMIT);
    const withHeader = { ...result, headers: { ...result.headers, 'x-one-more': '1' } };
    await expect(withinGatewayLimits(Promise.resolve(withHeader))).resolves.toEqual(INTERNAL_ERROR);
  });

  it('a plain body counts as Lambda counts it, JSON-escaped: 3.2 MB of quotes is 6.4 MB', async () => {
    const quotes: APIGatewayProxyStructuredResultV2 = { statusCode: 200, body: '"'.repeat(Math.ceil(LIMIT / 2) + 100) };
    expect(Buffer.byteLength(quotes.body!)).toBeLessThan(LIMIT);
    await expect(withinGatewayLimits(Promise.resolve(quotes))).resolves.toEqual(INTERNAL_ERROR);
  });

  it('an error status over the limit fails the same way', async () => {
    const result = { ...plainAnswerOf(LIMIT + 1000), statusCode: 404 };
    await expect(withinGatewayLimits(Promise.resolve(result))).resolves.toEqual(INTERNAL_ERROR);
  });
});

describe('the 30 s integration timeout', () => {
  it('is 30 s, and no HTTP route may run longer than the gateway waits', () => {
    expect(httpApiLimits.integrationTimeoutMs).toBe(30_000);
    expect(LONGEST_ROUTE_SECONDS).toBeLessThan(httpApiLimits.integrationTimeoutMs / 1000);
    for (const [id, row] of Object.entries(routes) as [string, RouteRow][]) {
      const seconds = row.timeoutSeconds ?? 10;
      expect({ id, withinGateway: seconds <= LONGEST_ROUTE_SECONDS }).toEqual({ id, withinGateway: true });
    }
  });

  it('a function that never answers → 503 {"message":"Service Unavailable"} at 30 s, not before', async () => {
    jest.useFakeTimers();
    let settled: unknown;
    void withinGatewayLimits(new Promise<never>(() => undefined)).then((outcome) => {
      settled = outcome;
    });
    await jest.advanceTimersByTimeAsync(httpApiLimits.integrationTimeoutMs - 1);
    expect(settled).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(settled).toEqual(UNAVAILABLE);
    expect(JSON.parse((settled as typeof UNAVAILABLE).gateway.body)).toEqual({ message: 'Service Unavailable' });
  });

  it('a function that answers at 29.9 s is heard, and leaves no timer behind', async () => {
    jest.useFakeTimers();
    const result: APIGatewayProxyStructuredResultV2 = { statusCode: 200, body: '{"ok":true}' };
    const slow = new Promise<APIGatewayProxyStructuredResultV2>((resolve) => setTimeout(() => resolve(result), 29_900));
    let settled: unknown;
    void withinGatewayLimits(slow).then((outcome) => {
      settled = outcome;
    });
    await jest.advanceTimersByTimeAsync(29_900);
    expect(settled).toEqual({ result });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a function that answers after 30 s is not heard: the 503 stands', async () => {
    jest.useFakeTimers();
    const late = new Promise<APIGatewayProxyStructuredResultV2>((resolve) =>
      setTimeout(() => resolve({ statusCode: 200, body: '{}' }), 31_000),
    );
    const outcome = withinGatewayLimits(late);
    await jest.advanceTimersByTimeAsync(31_000);
    await expect(outcome).resolves.toEqual(UNAVAILABLE);
  });
});
