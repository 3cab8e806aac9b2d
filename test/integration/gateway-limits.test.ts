import { type IncomingHttpHeaders, request } from 'node:http';
import { httpApiLimits } from '../../lib/runtime/aws-limits';
import { baseUrl, call, expectProblem, newUser } from '../support/api';

/**
 * The gateway's limits, over HTTP against the local stack: the HTTP API refuses a request body over
 * its 10 MB quota itself (413 with the gateway's own JSON, before any function runs), while a
 * body the gateway lets through but over the contract's 64 KiB is the service's own problem+json
 * 413. The 6 MB answer and the 30 s timeout are in test/unit/gateway-limits.test.ts.
 */

const GATEWAY_LIMIT = httpApiLimits.requestBytes;
const SERVICE_LIMIT = 64 * 1024;

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request with node:http, the body sent as given, the answer's bytes as they came. */
function post(path: string, body: Buffer, headers: Record<string, string>): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, baseUrl()),
      { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A JSON body `{"title":"ok"}` padded with whitespace to exactly `bytes` bytes: valid whatever its size. */
const paddedBoardBody = (bytes: number) => {
  const json = '{"title":"ok"}';
  const body = Buffer.from(json + ' '.repeat(bytes - json.length));
  expect(body.length).toBe(bytes);
  return body;
};

describe('request bodies', () => {
  it('the HTTP API quota is 10 MB', () => {
    expect(GATEWAY_LIMIT).toBe(10 * 1024 * 1024);
  });

  it('10 MiB + 1 byte → the gateway\'s 413 {"message":"Request Entity Too Large"}; no function runs', async () => {
    const user = await newUser();
    const reply = await post('/boards', paddedBoardBody(GATEWAY_LIMIT + 1), {
      authorization: `Bearer ${user.token}`,
      'content-type': 'application/json',
    });
    expect(reply.status).toBe(413);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(JSON.parse(reply.text)).toEqual({ message: 'Request Entity Too Large' });
    expect((await call('GET', '/boards', { token: user.token })).body).toEqual([]);
  });

  it('the gateway refuses it before authentication too (no token at all)', async () => {
    const reply = await post('/boards', paddedBoardBody(GATEWAY_LIMIT + 1), { 'content-type': 'application/json' });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.text)).toEqual({ message: 'Request Entity Too Large' });
  });

  it("exactly 10 MiB reaches the function, which answers with the service's own problem+json 413", async () => {
    const user = await newUser();
    const reply = await post('/boards', paddedBoardBody(GATEWAY_LIMIT), {
      authorization: `Bearer ${user.token}`,
      'content-type': 'application/json',
    });
    expect(reply.status).toBe(413);
    expect(reply.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(reply.text)).toMatchObject({ status: 413, title: expect.any(String), detail: expect.any(String) });
  });

  it("64 KiB + 1 byte → the service's own problem+json 413, not the gateway's", async () => {
    const user = await newUser();
    const reply = await call('POST', '/boards', {
      token: user.token,
      rawBody: paddedBoardBody(SERVICE_LIMIT + 1),
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(reply, 413);
    expect(reply.body).not.toHaveProperty('message');
  });

  it('exactly 64 KiB of valid JSON is judged by its content: 201', async () => {
    const user = await newUser();
    const reply = await call('POST', '/boards', {
      token: user.token,
      rawBody: paddedBoardBody(SERVICE_LIMIT),
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ title: 'ok' });
  });
});
