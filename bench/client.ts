import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { max, median, percentile, round } from './util';

/**
 * HTTP client of the benchmark: every answer of the local stack (TASK_BOARD_TRACE=1) carries the
 * trace headers of infra/local/http-adapter.ts, read here into numbers.
 */
export interface Trace {
  calls: number;
  sequential: number;
  capacity: number;
  commands: string;
  totalMs: number;
  dynamoMs: number;
  /** The service's own time: all but waiting on DynamoDB (the SDK's own work counts as DynamoDB). */
  ownMs: number;
}

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of any route
  body: any;
  /** The body's size after fetch has decoded it (the JSON, for a compressed answer). */
  bytes: number;
  wallMs: number;
  trace?: Trace;
  /** The answer's `content-encoding` (fetch asks for `gzip, deflate` on http: URLs), if any. */
  contentEncoding?: string;
  /** The answer's `ETag`, if any. */
  etag?: string;
}

/** An answer read with node:http, which decodes nothing: the body's bytes as they came over the socket. */
export interface WireAnswer {
  status: number;
  contentEncoding?: string;
  /** The `content-length` header (NaN when the answer had none). */
  contentLength: number;
  /** Body bytes as received, still encoded. */
  wireBytes: number;
  body: Buffer;
  wallMs: number;
  trace?: Trace;
}

export interface SendOptions {
  token?: string;
  body?: unknown;
  /** More request headers (`if-none-match`, `if-match`). */
  headers?: Record<string, string>;
}

export class Client {
  constructor(readonly baseUrl: string) {}

  async send(method: string, path: string, options: SendOptions = {}): Promise<Answer> {
    const started = performance.now();
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    });
    const buffer = Buffer.from(await response.arrayBuffer());
    const wallMs = performance.now() - started;
    const text = buffer.toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    return {
      status: response.status,
      body,
      bytes: buffer.length,
      wallMs,
      trace: readTrace(response.headers),
      contentEncoding: response.headers.get('content-encoding') ?? undefined,
      etag: response.headers.get('etag') ?? undefined,
    };
  }

  /**
   * A GET whose body is counted as it arrives, still encoded (undici's fetch would decode it):
   * `acceptEncoding` is sent as `Accept-Encoding`, or no such header at all when it is undefined.
   */
  wire(path: string, token: string, acceptEncoding?: string): Promise<WireAnswer> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.baseUrl}${path}`,
        {
          method: 'GET',
          headers: { authorization: `Bearer ${token}`, ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            const header = (name: string) => {
              const value = res.headers[name];
              return Array.isArray(value) ? value.join(', ') : value;
            };
            resolve({
              status: res.statusCode ?? 0,
              contentEncoding: header('content-encoding'),
              contentLength: Number(header('content-length') ?? Number.NaN),
              wireBytes: body.length,
              body,
              wallMs: performance.now() - started,
              trace: readTrace({ get: (name) => header(name) ?? null }),
            });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** Sends and insists on one status; a 503 (storage busy, lost races) is retried a few times. */
  async expect(status: number, method: string, path: string, options: SendOptions = {}): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      const answer = await this.send(method, path, options);
      if (answer.status === status) return answer;
      if (answer.status === 503 && attempt < 5) {
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        continue;
      }
      throw new Error(
        `${method} ${path}: expected ${status}, got ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}`,
      );
    }
  }

  /** Registers a fresh user; returns its token and id. */
  async register(label: string): Promise<{ token: string; userId: string; email: string; answer: Answer }> {
    const email = `bench-${label}-${randomUUID()}@example.test`;
    const answer = await this.expect(201, 'POST', '/auth/register', {
      body: { email, password: 'bench password', display_name: `Bench ${label}` },
    });
    const token = answer.body.token as string;
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string };
    await this.verifyAddress(email, token);
    return { token, userId: payload.sub, email, answer };
  }

  /**
   * Proves the address (member-add finds verified accounts only, docs/accounts.md) with the code
   * from the local stack's outbox; the bench runs against the local stack.
   */
  private async verifyAddress(email: string, token: string): Promise<void> {
    await this.expect(202, 'POST', '/auth/verify-email/request', { token });
    const mail = await this.expect(200, 'GET', `/local/outbox?email=${encodeURIComponent(email)}`);
    const code = (mail.body as { code: string }[])[0]?.code;
    await this.expect(204, 'POST', '/auth/verify-email', { token, body: { code } });
  }
}

function readTrace(headers: { get(name: string): string | null }): Trace | undefined {
  const calls = headers.get('x-trace-dynamodb-calls');
  if (calls === null) return undefined;
  const n = (name: string) => Number(headers.get(name) ?? Number.NaN);
  const totalMs = n('x-trace-total-ms');
  const dynamoMs = n('x-trace-dynamodb-ms');
  return {
    calls: Number(calls),
    sequential: n('x-trace-dynamodb-sequential'),
    capacity: n('x-trace-dynamodb-capacity'),
    commands: headers.get('x-trace-dynamodb-commands') ?? '',
    totalMs,
    dynamoMs,
    ownMs: totalMs - dynamoMs,
  };
}

/** Every answer of one route in one run, and what they add up to. */
export class RouteSample {
  readonly answers: Answer[] = [];
  readonly unexpected: { status: number; body: unknown }[] = [];

  constructor(
    readonly route: string,
    readonly expectedStatus: number,
  ) {}

  add(answer: Answer): Answer {
    if (answer.status === this.expectedStatus) this.answers.push(answer);
    else if (this.unexpected.length < 5) this.unexpected.push({ status: answer.status, body: answer.body });
    else this.unexpected.push({ status: answer.status, body: undefined });
    return answer;
  }

  summary(): RouteSummary {
    const traces = this.answers.map((a) => a.trace).filter((t): t is Trace => t !== undefined);
    const pick = (f: (t: Trace) => number) => traces.map(f);
    const commandCounts = new Map<string, number>();
    for (const t of traces) commandCounts.set(t.commands, (commandCounts.get(t.commands) ?? 0) + 1);
    const commands = [...commandCounts].sort((a, b) => b[1] - a[1]).map(([c]) => c);
    return {
      route: this.route,
      n: this.answers.length,
      unexpected: this.unexpected.length,
      unexpectedExamples: this.unexpected.slice(0, 3),
      sequential: { median: median(pick((t) => t.sequential)), max: max(pick((t) => t.sequential)) },
      calls: { median: median(pick((t) => t.calls)), max: max(pick((t) => t.calls)) },
      capacity: { median: median(pick((t) => t.capacity)), max: max(pick((t) => t.capacity)) },
      commands: commands.slice(0, 3),
      ownMs: stats(pick((t) => t.ownMs)),
      totalMs: stats(pick((t) => t.totalMs)),
      dynamoMs: stats(pick((t) => t.dynamoMs)),
      wallMs: stats(this.answers.map((a) => a.wallMs)),
      responseBytes: median(this.answers.map((a) => a.bytes)),
    };
  }
}

export interface Stats {
  p50: number;
  p99: number;
  max: number;
}

export const stats = (values: number[]): Stats => ({
  p50: round(percentile(values, 50), 3),
  p99: round(percentile(values, 99), 3),
  max: round(max(values), 3),
});

export interface RouteSummary {
  route: string;
  n: number;
  unexpected: number;
  unexpectedExamples: { status: number; body: unknown }[];
  sequential: { median: number; max: number };
  calls: { median: number; max: number };
  capacity: { median: number; max: number };
  commands: string[];
  ownMs: Stats;
  totalMs: Stats;
  dynamoMs: Stats;
  wallMs: Stats;
  responseBytes: number;
}
