import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type BareItem, type Item, parseItem, parseList, serializeItem, serializeList } from 'structured-headers';
import { keyHash } from '../../lib/data/table';
import { routes } from '../../lib/routes';
import { type RouteRow, rateLimitOf } from '../../lib/rows/row';
import { subjectOf } from '../support/api';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { outbox, verifyAddress } from '../support/mail';
import { eventually, pause } from '../support/wait';

/**
 * The rate limits (docs/rate-limits.md), over HTTP against a local stack of its own whose
 * functions are given small quotas (the shared stack sets none, so no other test is limited):
 * 5 requests per user and 4 per address, per fixed window of 20 s. Every test uses its own users and its own
 * source addresses (127.0.0.x: the local server sees the loopback address a request comes from,
 * as API Gateway gives a function the client's), so no test spends another's quota.
 *
 * No assertion depends on the machine's speed: a test that needs its requests in one window starts
 * them with at least half a window left (waiting for the next window when less is, or always when
 * its setup spent some of the quota they count on) and, if they still straddled a boundary (each
 * request's window is known from the clock before it was sent and after it was answered: the stack
 * runs on this machine's clock), runs again with new users.
 */

const USER_QUOTA = 5;
const ADDRESS_QUOTA = 4;
const WINDOW_SECONDS = 20;

const dataDir = mkdtempSync(join(tmpdir(), 'task-board-rate-limits-'));
let stack: RunningStack | undefined;
let baseUrl: string;
/** The stack's own folder (its local-env.json names its table), for looking behind the API. */
let stackDir: string;

beforeAll(async () => {
  // A second DynamoDB Local beside the shared stack's: on a machine busy enough that one does not
  // get ready in its time, start again (in a new folder) rather than fail the file.
  for (let attempt = 1; ; attempt++) {
    try {
      stackDir = join(dataDir, String(attempt));
      stack = await startStackProcess(stackDir, {
        RATE_LIMIT_REQUESTS: String(USER_QUOTA),
        AUTH_RATE_LIMIT_REQUESTS: String(ADDRESS_QUOTA),
        RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
      });
      break;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
  baseUrl = stack!.url;
});

afterAll(async () => {
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

// --- calls from chosen source addresses --------------------------------------------------------------

let nextAddress = 2;
/** A loopback address no other test of this file uses. */
const newAddress = () => `127.0.0.${nextAddress++}`;

interface Reply {
  status: number;
  headers: Record<string, string | undefined>;
  body: any;
  /** The windows (their start, epoch s) of the clock before sending and after the answer. */
  windows: [number, number];
  /** The clock (epoch ms) before sending and after the answer. */
  sentAt: number;
  receivedAt: number;
}

const windowOf = (epochMs: number) => Math.floor(epochMs / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;

interface CallOptions {
  from: string;
  token?: string;
  authorization?: string;
  body?: unknown;
  /** Sent as is (with `content-type: application/json` unless `headers` says otherwise), instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

function call(
  method: string,
  path: string,
  { from, token, authorization, body, rawBody, headers = {} }: CallOptions,
): Promise<Reply> {
  const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
  const sentAt = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}${path}`,
      {
        method,
        localAddress: from,
        headers: {
          // Node frames a GET's or DELETE's body only with a length given.
          ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}),
          ...headers,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(authorization ? { authorization } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const receivedAt = Date.now();
          const flat = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, [value].flat().join(', ')]));
          resolve({
            status: res.statusCode!,
            headers: flat,
            body: text && /json/.test(flat['content-type'] ?? '') ? JSON.parse(text) : text,
            windows: [windowOf(sentAt), windowOf(receivedAt)],
            sentAt,
            receivedAt,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Whether every reply was sent and answered within one and the same window. */
const oneWindow = (replies: Reply[]) => new Set(replies.flatMap((reply) => reply.windows)).size === 1;

/** Waits until the window after the one `epochMs` falls in has begun. */
async function untilWindowAfter(epochMs: number): Promise<void> {
  await pause((windowOf(epochMs) + WINDOW_SECONDS) * 1000 - Date.now() + 20);
}

/** Waits until a window has just begun: for a test whose setup spent quota that its requests count on. */
const atWindowStart = () => untilWindowAfter(Date.now());

/**
 * Half a window: what a test's requests after `withHalfAWindowLeft` may take before a boundary
 * could split them. They take a second or two; inOneWindow runs an attempt that straddled anyway.
 */
const ROOM_MS = (WINDOW_SECONDS * 1000) / 2;

/**
 * Goes on at once while half a window is left, and otherwise waits for the next window to begin.
 * Waiting for every window's start would idle a test worker for half a window per test on average.
 */
async function withHalfAWindowLeft(): Promise<void> {
  const now = Date.now();
  if ((windowOf(now) + WINDOW_SECONDS) * 1000 - now < ROOM_MS) await untilWindowAfter(now);
}

/**
 * Runs `attempt` until its requests fall in one window, three tries at most. Each attempt counts
 * on users or addresses of its own: a straddling attempt spent quota in two windows.
 */
async function inOneWindow<T>(attempt: () => Promise<{ replies: Reply[]; result: T }>): Promise<T> {
  for (let tries = 1; ; tries++) {
    const { replies, result } = await attempt();
    if (oneWindow(replies)) return result;
    if (tries === 3)
      throw new Error('three attempts each straddled a window boundary: the machine is too slow for a 20 s window');
  }
}

// --- users -------------------------------------------------------------------------------------------

interface User {
  id: string;
  email: string;
  password: string;
  token: string;
}

/** Registers from an address of its own (registration counts per address). */
async function newUser(): Promise<User> {
  const email = `rate-${randomUUID()}@example.test`;
  const password = `pw-${randomUUID()}`;
  const reply = await call('POST', '/auth/register', {
    from: newAddress(),
    body: { email, password, display_name: 'Rate Limited' },
  });
  if (reply.status !== 201) throw new Error(`register failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { id: subjectOf(reply.body.token), email, password, token: reply.body.token };
}

// --- the fields, read with a Structured Field parser (RFC 9651) ------------------------------------

interface Fields {
  policy: string;
  q: number;
  w: number;
  r: number;
  t: number;
}

/** A String (`"user"`), not a Token (`user`), which the parser gives as an instance of its own. */
const nameOf = (item: BareItem) => {
  if (typeof item !== 'string') throw new Error(`policy name ${String(item)} is not a String`);
  return item;
};
const integer = (params: Map<string, BareItem>, key: string) => {
  const value = params.get(key);
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new Error(`${key}=${String(value)} is not an Integer`);
  return value;
};

/** RateLimit-Policy (a List of one Item) and RateLimit (one Item, of the same policy), parsed. */
function fieldsOf(reply: Reply): Fields {
  const policyField = reply.headers['ratelimit-policy'];
  const limitField = reply.headers.ratelimit;
  if (policyField === undefined || limitField === undefined) {
    throw new Error(`no RateLimit fields on ${reply.status}: ${JSON.stringify(reply.headers)}`);
  }
  const policies = parseList(policyField) as Item[];
  expect(policies).toHaveLength(1);
  const [policyName, policyParams] = policies[0]!;
  const limit = parseItem(limitField);
  const [limitName, limitParams] = limit;
  // Written in the canonical form (Integers, not Decimals; no stray spaces).
  expect(serializeList(policies)).toBe(policyField);
  expect(serializeItem(limit)).toBe(limitField);
  expect(nameOf(limitName)).toBe(nameOf(policyName));
  expect([...policyParams.keys()].sort()).toEqual(['q', 'w']);
  expect([...limitParams.keys()].sort()).toEqual(['r', 't']);
  const fields = {
    policy: nameOf(policyName),
    q: integer(policyParams, 'q'),
    w: integer(policyParams, 'w'),
    r: integer(limitParams, 'r'),
    t: integer(limitParams, 't'),
  };
  // The window is the configured one, and resets within it.
  expect(fields.w).toBe(WINDOW_SECONDS);
  expect(fields.t).toBeGreaterThanOrEqual(1);
  expect(fields.t).toBeLessThanOrEqual(WINDOW_SECONDS);
  return fields;
}

/** A 429 of the limiter: problem+json `rate_limited`, `r=0`, Retry-After the same seconds as `t`. */
function expectRefused(reply: Reply, policy: 'user' | 'address') {
  expect(reply.status).toBe(429);
  expect(reply.headers['content-type']).toBe('application/problem+json');
  expect(reply.headers['x-content-type-options']).toBe('nosniff');
  expect(reply.body).toMatchObject({ status: 429, code: 'rate_limited', title: 'Too Many Requests', type: 'about:blank' });
  const fields = fieldsOf(reply);
  expect(fields).toMatchObject({ policy, r: 0 });
  expect(reply.headers['retry-after']).toBe(String(fields.t));
}

// --- the rules --------------------------------------------------------------------------------------

describe('per-user quota', () => {
  it('serves exactly the quota of a burst sent at once and refuses the rest; a refused write changes nothing', async () => {
    const { cards, served } = await inOneWindow(async () => {
      const owner = await newUser();
      const member = await newUser();
      await verifyAddress(member, baseUrl);
      const address = newAddress();
      const board = await call('POST', '/boards', { from: address, token: owner.token, body: { title: 'Burst' } });
      expect(board.status).toBe(201);
      expect(
        (
          await call('POST', `/boards/${board.body.id}/members`, {
            from: address,
            token: owner.token,
            body: { email: member.email },
          })
        ).status,
      ).toBe(201);
      const column = await call('POST', `/boards/${board.body.id}/columns`, {
        from: address,
        token: owner.token,
        body: { title: 'Cards' },
      });
      expect(column.status).toBe(201);
      // A window of its own for the burst (the setup spent the owner's quota): the quota plus four
      // more card creations, all at once.
      await atWindowStart();
      const replies = await Promise.all(
        Array.from({ length: USER_QUOTA + 4 }, (_, i) =>
          call('POST', `/columns/${column.body.id}/cards`, { from: address, token: owner.token, body: { title: `card ${i}` } }),
        ),
      );
      // The owner's quota is spent; the member's is its own, and reads what the burst left.
      const read = await call('GET', `/columns/${column.body.id}`, { from: address, token: member.token });
      expect(read.status).toBe(200);
      expect(fieldsOf(read)).toMatchObject({ policy: 'user', q: USER_QUOTA });
      return { replies, result: { served: replies, cards: read.body.cards as { title: string }[] } };
    });
    const ok = served.filter((reply) => reply.status === 201);
    const refused = served.filter((reply) => reply.status !== 201);
    expect(ok).toHaveLength(USER_QUOTA);
    expect(refused).toHaveLength(4);
    for (const reply of refused) expectRefused(reply, 'user');
    // Each served request was counted once: the requests left are each of q-1 .. 0 exactly once.
    expect(ok.map((reply) => fieldsOf(reply).r).sort()).toEqual([0, 1, 2, 3, 4]);
    for (const reply of ok) expect(fieldsOf(reply)).toMatchObject({ policy: 'user', q: USER_QUOTA });
    // Only the served creations exist.
    expect(cards.map((card) => card.title).sort()).toEqual(ok.map((reply) => reply.body.title).sort());
  });

  it('counts every token of a user together, and no other user', async () => {
    const replies = await inOneWindow(async () => {
      const user = await newUser();
      const other = await newUser();
      const login = await call('POST', '/auth/login', {
        from: newAddress(),
        body: { email: user.email, password: user.password },
      });
      expect(login.status).toBe(200);
      const second = login.body.token as string;
      expect(second).not.toBe(user.token);
      await withHalfAWindowLeft();
      const address = newAddress();
      const both = await Promise.all(
        [user.token, second, user.token, second, user.token, second].map((token) =>
          call('GET', '/auth/me', { from: address, token }),
        ),
      );
      // The other user, from the same address, is served on its own quota.
      const others = await call('GET', '/auth/me', { from: address, token: other.token });
      return { replies: [...both, others], result: { both, others } };
    });
    expect(replies.both.filter((reply) => reply.status === 200)).toHaveLength(USER_QUOTA);
    expect(
      replies.both
        .filter((reply) => reply.status === 200)
        .map((reply) => fieldsOf(reply).r)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4]);
    for (const reply of replies.both.filter((reply) => reply.status !== 200)) expectRefused(reply, 'user');
    expect(replies.others.status).toBe(200);
    expect(fieldsOf(replies.others)).toMatchObject({ policy: 'user', r: USER_QUOTA - 1 });
  });

  it('starts again at the next window, which begins at a multiple of its length from the epoch', async () => {
    const outcome = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const served: Reply[] = [];
      for (let i = 0; i < USER_QUOTA; i++) served.push(await call('GET', '/auth/me', { from: address, token: user.token }));
      const over = await call('GET', '/auth/me', { from: address, token: user.token });
      return { replies: [...served, over], result: { served, over, user, address } };
    });
    // One after another: the count goes down by one each time, then the quota is spent.
    expect(outcome.served.map((reply) => fieldsOf(reply).r)).toEqual([4, 3, 2, 1, 0]);
    expectRefused(outcome.over, 'user');
    // The window ends at the next multiple of its length from the epoch, and `t` counts the whole
    // seconds to it from some moment between sending and receiving the refusal.
    const boundary = (outcome.over.windows[0] + WINDOW_SECONDS) * 1000;
    const { t } = fieldsOf(outcome.over);
    expect(t).toBeLessThanOrEqual(Math.max(1, Math.ceil((boundary - outcome.over.sentAt) / 1000)));
    expect(t).toBeGreaterThanOrEqual(Math.max(1, Math.ceil((boundary - outcome.over.receivedAt) / 1000)));
    await untilWindowAfter(outcome.over.sentAt);
    const again = await call('GET', '/auth/me', { from: outcome.address, token: outcome.user.token });
    expect(again.status).toBe(200);
    expect(fieldsOf(again)).toMatchObject({ policy: 'user', q: USER_QUOTA, r: USER_QUOTA - 1 });
  });

  it('counts socket tickets, and exposes the fields to browsers', async () => {
    const user = await newUser();
    const reply = await call('POST', '/realtime/tickets', {
      from: newAddress(),
      token: user.token,
      headers: { origin: 'https://app.example' },
    });
    expect(reply.status).toBe(201);
    expect(fieldsOf(reply)).toMatchObject({ policy: 'user', q: USER_QUOTA });
    const exposed = (reply.headers['access-control-expose-headers'] ?? '').split(',').map((name) => name.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['ratelimit-policy', 'ratelimit', 'retry-after']));
  });
});

describe('per-address quota', () => {
  it('stops a password-guessing loop at the quota: the right password is refused too, and other addresses are not', async () => {
    const user = await newUser();
    const { guesses, right } = await inOneWindow(async () => {
      await withHalfAWindowLeft();
      const address = newAddress();
      const guesses: Reply[] = [];
      for (let i = 0; i < ADDRESS_QUOTA; i++) {
        guesses.push(
          await call('POST', '/auth/login', { from: address, body: { email: user.email, password: `wrong-${i}-guess` } }),
        );
      }
      const right = await call('POST', '/auth/login', { from: address, body: { email: user.email, password: user.password } });
      return { replies: [...guesses, right], result: { guesses, right } };
    });
    expect(guesses.map((reply) => reply.status)).toEqual([401, 401, 401, 401]);
    expect(guesses.map((reply) => fieldsOf(reply))).toEqual(
      [3, 2, 1, 0].map((r) => expect.objectContaining({ policy: 'address', q: ADDRESS_QUOTA, r })),
    );
    expectRefused(right, 'address');
    expect(right.body).not.toHaveProperty('token');
    // Another address is counted on its own.
    const elsewhere = await call('POST', '/auth/login', {
      from: newAddress(),
      body: { email: user.email, password: user.password },
    });
    expect(elsewhere.status).toBe(200);
    expect(fieldsOf(elsewhere)).toMatchObject({ policy: 'address', r: ADDRESS_QUOTA - 1 });
  });

  it('counts requests with a missing or refused token per address; a valid token is still counted per user', async () => {
    const { bad, refused, valid } = await inOneWindow(async () => {
      // A user of its own each attempt: a retried attempt may fall in the window of the last one's valid request.
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const bad = [
        await call('GET', '/boards', { from: address }),
        await call('GET', '/boards', { from: address, token: 'not-a-token' }),
        await call('GET', '/boards', { from: address, authorization: 'Basic dXNlcjpwYXNz' }),
        await call('GET', '/boards', { from: address, token: `${user.token}x` }),
      ];
      const refused = await call('GET', '/boards', { from: address, token: 'still-not-a-token' });
      const valid = await call('GET', '/boards', { from: address, token: user.token });
      return { replies: [...bad, refused, valid], result: { bad, refused, valid } };
    });
    expect(bad.map((reply) => reply.status)).toEqual([401, 401, 401, 401]);
    expect(bad.map((reply) => fieldsOf(reply).r)).toEqual([3, 2, 1, 0]);
    for (const reply of bad) expect(fieldsOf(reply)).toMatchObject({ policy: 'address', q: ADDRESS_QUOTA });
    expectRefused(refused, 'address');
    expect(valid.status).toBe(200);
    expect(fieldsOf(valid)).toMatchObject({ policy: 'user', r: USER_QUOTA - 1 });
  });

  it('counts registration per address: a refused registration creates no account', async () => {
    const { replies, email } = await inOneWindow(async () => {
      await withHalfAWindowLeft();
      const address = newAddress();
      const register = (email: string) =>
        call('POST', '/auth/register', { from: address, body: { email, password: `pw-${randomUUID()}`, display_name: 'Many' } });
      const replies: Reply[] = [];
      for (let i = 0; i < ADDRESS_QUOTA; i++) replies.push(await register(`many-${randomUUID()}@example.test`));
      const email = `refused-${randomUUID()}@example.test`;
      replies.push(await register(email));
      return { replies, result: { replies, email } };
    });
    expect(replies.map((reply) => reply.status)).toEqual([201, 201, 201, 201, 429]);
    expectRefused(replies[4]!, 'address');
    // The refused address can register from elsewhere: nothing was created under it.
    const later = await call('POST', '/auth/register', {
      from: newAddress(),
      body: { email, password: `pw-${randomUUID()}`, display_name: 'Later' },
    });
    expect(later.status).toBe(201);
  });
});

// --- the routes whose first call is not a read ------------------------------------------------------

/** Every item of the stack's table, each as canonical JSON (keys sorted at every depth), sorted. */
async function tableContents(): Promise<string[]> {
  const env = localEnv(stackDir);
  const client = localDocumentClient(env);
  const canonical = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Set)
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([key, item]) => [key, canonical(item)]),
        )
      : value instanceof Set
        ? [...value].sort()
        : value;
  try {
    const items: string[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: env.TABLE_NAME, ConsistentRead: true, ExclusiveStartKey }));
      for (const item of page.Items ?? []) items.push(JSON.stringify(canonical(item)));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return items.sort();
  } finally {
    client.destroy();
  }
}

/** The boards a user is a member of, read behind the API (the API would spend the user's quota). */
async function boardsOf(userId: string): Promise<string[]> {
  const env = localEnv(stackDir);
  const client = localDocumentClient(env);
  try {
    const items = await readPartition(client, env.TABLE_NAME!, `USER#${userId}`);
    return items.filter((item) => String(item.sk).startsWith('BOARD#')).map((item) => String(item.board_id));
  } finally {
    client.destroy();
  }
}

/** The hashes of the tickets a user holds, from their entries under the user, read behind the API. */
async function ticketsOf(userId: string): Promise<string[]> {
  const env = localEnv(stackDir);
  const client = localDocumentClient(env);
  try {
    const items = await readPartition(client, env.TABLE_NAME!, `USER#${userId}`);
    return items.filter((item) => String(item.sk).startsWith('TICKET#')).map((item) => String(item.sk).slice('TICKET#'.length));
  } finally {
    client.destroy();
  }
}

describe("routes whose first call is not a read: the count in POST /boards' and tickets' transactions, beside login's Cognito call", () => {
  it('serves POST /boards the quota one after another, r counting down; a refused create changes nothing in the table', async () => {
    const { served, refused, before, after, user } = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const served: Reply[] = [];
      for (let i = 0; i < USER_QUOTA; i++) {
        served.push(await call('POST', '/boards', { from: address, token: user.token, body: { title: `board ${i}` } }));
      }
      const before = await tableContents();
      const refused = await call('POST', '/boards', { from: address, token: user.token, body: { title: 'one too many' } });
      const after = await tableContents();
      return { replies: [...served, refused], result: { served, refused, before, after, user } };
    });
    expect(served.map((reply) => reply.status)).toEqual([201, 201, 201, 201, 201]);
    expect(served.map((reply) => fieldsOf(reply))).toEqual(
      [4, 3, 2, 1, 0].map((r) => expect.objectContaining({ policy: 'user', q: USER_QUOTA, r })),
    );
    expectRefused(refused, 'user');
    // Not one item written or changed: no board, no membership, and the counter as it was.
    expect(after).toEqual(before);
    expect((await boardsOf(user.id)).sort()).toEqual(served.map((reply) => reply.body.id).sort());
  });

  it('serves exactly the quota of a burst of board creations and reads sent at once: only the served boards exist', async () => {
    const { replies, user } = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const replies = await Promise.all([
        ...Array.from({ length: USER_QUOTA + 1 }, (_, i) =>
          call('POST', '/boards', { from: address, token: user.token, body: { title: `burst ${i}` } }),
        ),
        ...Array.from({ length: 3 }, () => call('GET', '/auth/me', { from: address, token: user.token })),
      ]);
      return { replies, result: { replies, user } };
    });
    const ok = replies.filter((reply) => reply.status === 200 || reply.status === 201);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(ok).toHaveLength(USER_QUOTA);
    expect(refused).toHaveLength(replies.length - USER_QUOTA);
    for (const reply of refused) expectRefused(reply, 'user');
    for (const reply of ok) expect(fieldsOf(reply).r).toBeLessThan(USER_QUOTA);
    const created = ok.filter((reply) => reply.status === 201).map((reply) => reply.body.id as string);
    expect((await boardsOf(user.id)).sort()).toEqual(created.sort());
  });

  it('serves POST /realtime/tickets the quota one after another, r counting down; a refused ticket changes nothing in the table', async () => {
    const { served, refused, before, after, user } = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const served: Reply[] = [];
      for (let i = 0; i < USER_QUOTA; i++)
        served.push(await call('POST', '/realtime/tickets', { from: address, token: user.token }));
      const before = await tableContents();
      const refused = await call('POST', '/realtime/tickets', { from: address, token: user.token });
      const after = await tableContents();
      return { replies: [...served, refused], result: { served, refused, before, after, user } };
    });
    expect(served.map((reply) => reply.status)).toEqual([201, 201, 201, 201, 201]);
    expect(served.map((reply) => fieldsOf(reply))).toEqual(
      [4, 3, 2, 1, 0].map((r) => expect.objectContaining({ policy: 'user', q: USER_QUOTA, r })),
    );
    expectRefused(refused, 'user');
    expect(refused.body.ticket).toBeUndefined();
    // Not one item written or changed: no ticket, no entry under the user, and the counter as it was.
    expect(after).toEqual(before);
    const issued = served.map((reply) => keyHash(reply.body.ticket as string));
    expect((await ticketsOf(user.id)).sort()).toEqual(issued.sort());
  });

  it('serves exactly the quota of a burst of tickets sent at once: only the served tickets exist', async () => {
    const { replies, user } = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const replies = await Promise.all(
        Array.from({ length: USER_QUOTA + 3 }, () => call('POST', '/realtime/tickets', { from: address, token: user.token })),
      );
      return { replies, result: { replies, user } };
    });
    const served = replies.filter((reply) => reply.status === 201);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(served).toHaveLength(USER_QUOTA);
    expect(refused).toHaveLength(3);
    for (const reply of refused) expectRefused(reply, 'user');
    for (const reply of served) expect(fieldsOf(reply).r).toBeLessThan(USER_QUOTA);
    const issued = served.map((reply) => keyHash(reply.body.ticket as string));
    expect((await ticketsOf(user.id)).sort()).toEqual(issued.sort());
  });

  it('counts a password reset request beside its read: over the address quota it is refused and mails no code', async () => {
    const user = await newUser();
    const { served, refused, mailsBefore, mailsAfter } = await inOneWindow(async () => {
      await withHalfAWindowLeft();
      const address = newAddress();
      const ask = () => call('POST', '/auth/password/forgot', { from: address, body: { email: user.email } });
      const served: Reply[] = [];
      for (let i = 0; i < ADDRESS_QUOTA; i++) served.push(await ask());
      const mailsBefore = (await outbox(user.email, baseUrl)).length;
      const refused = await ask();
      const mailsAfter = (await outbox(user.email, baseUrl)).length;
      return { replies: [...served, refused], result: { served, refused, mailsBefore, mailsAfter } };
    });
    expect(served.map((reply) => reply.status)).toEqual([202, 202, 202, 202]);
    expect(served.map((reply) => fieldsOf(reply).r)).toEqual([3, 2, 1, 0]);
    expectRefused(refused, 'address');
    // The served ones mailed codes; the refused one none.
    expect(mailsBefore).toBeGreaterThan(0);
    expect(mailsAfter).toBe(mailsBefore);
  });

  it('serves exactly the quota of a burst of logins sent at once: the refused ones carry no token', async () => {
    const user = await newUser();
    const replies = await inOneWindow(async () => {
      await withHalfAWindowLeft();
      const address = newAddress();
      const replies = await Promise.all(
        Array.from({ length: ADDRESS_QUOTA + 3 }, () =>
          call('POST', '/auth/login', { from: address, body: { email: user.email, password: user.password } }),
        ),
      );
      return { replies, result: replies };
    });
    const ok = replies.filter((reply) => reply.status === 200);
    const refused = replies.filter((reply) => reply.status !== 200);
    expect(ok).toHaveLength(ADDRESS_QUOTA);
    expect(ok.map((reply) => fieldsOf(reply).r).sort()).toEqual([0, 1, 2, 3]);
    for (const reply of ok) expect(typeof reply.body.token).toBe('string');
    expect(refused).toHaveLength(3);
    for (const reply of refused) {
      expectRefused(reply, 'address');
      expect(reply.body).not.toHaveProperty('token');
      expect(reply.body).not.toHaveProperty('refresh_token');
    }
  });
});

/** Sends `send` (a request that mails a code to `email`), and answers its reply and the code it mailed. */
async function mailed(email: string, send: () => Promise<Reply>): Promise<{ reply: Reply; code: string }> {
  const before = (await outbox(email, baseUrl)).length;
  const reply = await send();
  expect(reply.status).toBe(202);
  let code = '';
  await eventually(async () => {
    const messages = await outbox(email, baseUrl);
    expect(messages.length).toBeGreaterThan(before);
    code = messages[0]!.code;
  });
  return { reply, code };
}

/** Waits until the window of `reply` has ended. */
const afterWindowOf = (reply: Reply) => untilWindowAfter(reply.receivedAt);

describe('routes that check a mailed code: the count beside their first read, and a refused request leaves the code unused', () => {
  it('a refused address verification changes nothing, and its code still verifies the address in the next window', async () => {
    const { user, code, address, refused, before, after } = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const { reply: requested, code } = await mailed(user.email, () =>
        call('POST', '/auth/verify-email/request', { from: address, token: user.token }),
      );
      // The rest of the user's quota, spent.
      const spent: Reply[] = [];
      for (let i = 1; i < USER_QUOTA; i++) spent.push(await call('GET', '/auth/me', { from: address, token: user.token }));
      const before = await tableContents();
      const refused = await call('POST', '/auth/verify-email', { from: address, token: user.token, body: { code } });
      const after = await tableContents();
      return { replies: [requested, ...spent, refused], result: { user, code, address, refused, before, after } };
    });
    expectRefused(refused, 'user');
    // Not one item written or changed: the address is still unproven, the counter as it was.
    expect(after).toEqual(before);
    await afterWindowOf(refused);
    const verified = await call('POST', '/auth/verify-email', { from: address, token: user.token, body: { code } });
    expect(verified.status).toBe(204);
    expect(fieldsOf(verified)).toMatchObject({ policy: 'user', r: USER_QUOTA - 1 });
    const me = await call('GET', '/auth/me', { from: address, token: user.token });
    expect(me.body).toMatchObject({ email: user.email, email_verified: true });
  });

  it('a refused password reset changes nothing: the old password still signs in, and the code still resets it in the next window', async () => {
    const user = await newUser();
    const newPassword = `new-${randomUUID()}`;
    const { code, address, refused, before, after } = await inOneWindow(async () => {
      await withHalfAWindowLeft();
      const address = newAddress();
      const { reply: asked, code } = await mailed(user.email, () =>
        call('POST', '/auth/password/forgot', { from: address, body: { email: user.email } }),
      );
      // The rest of the address's quota, spent on addresses nobody holds.
      const spent: Reply[] = [];
      for (let i = 1; i < ADDRESS_QUOTA; i++) {
        spent.push(
          await call('POST', '/auth/password/forgot', { from: address, body: { email: `nobody-${randomUUID()}@example.test` } }),
        );
      }
      const before = await tableContents();
      const refused = await call('POST', '/auth/password/reset', {
        from: address,
        body: { email: user.email, code, new_password: newPassword },
      });
      const after = await tableContents();
      return { replies: [asked, ...spent, refused], result: { code, address, refused, before, after } };
    });
    expectRefused(refused, 'address');
    expect(after).toEqual(before);
    // Cognito never saw the code: the password is the old one (signing in from elsewhere).
    const old = await call('POST', '/auth/login', { from: newAddress(), body: { email: user.email, password: user.password } });
    expect(old.status).toBe(200);
    await afterWindowOf(refused);
    const reset = await call('POST', '/auth/password/reset', {
      from: address,
      body: { email: user.email, code, new_password: newPassword },
    });
    expect(reset.status).toBe(204);
    expect(fieldsOf(reset)).toMatchObject({ policy: 'address', r: ADDRESS_QUOTA - 1 });
    const elsewhere = newAddress();
    expect(
      (await call('POST', '/auth/login', { from: elsewhere, body: { email: user.email, password: user.password } })).status,
    ).toBe(401);
    expect(
      (await call('POST', '/auth/login', { from: elsewhere, body: { email: user.email, password: newPassword } })).status,
    ).toBe(200);
  });
});

describe('POST /boards/{id}/batch: one request per operation, taken whole', () => {
  it('counts a batch as its operations; with fewer left it is refused whole and counts as one; a refused batch counts as one', async () => {
    const { owner, column, replies } = await inOneWindow(async () => {
      const owner = await newUser();
      const member = await newUser();
      await verifyAddress(member, baseUrl);
      const address = newAddress();
      const board = await call('POST', '/boards', { from: address, token: owner.token, body: { title: 'Batches' } });
      expect(board.status).toBe(201);
      const added = await call('POST', `/boards/${board.body.id}/members`, {
        from: address,
        token: owner.token,
        body: { email: member.email },
      });
      expect(added.status).toBe(201);
      const column = await call('POST', `/boards/${board.body.id}/columns`, {
        from: address,
        token: owner.token,
        body: { title: 'Cards' },
      });
      expect(column.status).toBe(201);
      // The member's address verification spent some of its quota: a window of its own.
      await atWindowStart();
      const creates = (n: number, key?: string) =>
        call('POST', `/boards/${board.body.id}/batch`, {
          from: address,
          token: member.token,
          body: {
            operations: Array.from({ length: n }, (_, i) => ({
              op: 'card.create',
              column_id: column.body.id,
              title: `card ${i}`,
            })),
          },
          headers: key ? { 'idempotency-key': key } : {},
        });
      // The member's quota is 5: 2 served; 4 (with an Idempotency-Key: counted before the work)
      // and 3 (counted in the batch's transaction) each refused whole and counted as one; 1
      // served; then a malformed batch, counted, past the quota.
      const replies = [];
      replies.push(await creates(2));
      replies.push(await creates(4, randomUUID()));
      replies.push(await creates(3));
      replies.push(await creates(1));
      replies.push(
        await call('POST', `/boards/${board.body.id}/batch`, { from: address, token: member.token, body: { operations: [] } }),
      );
      return { replies, result: { owner, column: column.body, replies } };
    });
    const [two, four, three, one, malformed] = replies as [Reply, Reply, Reply, Reply, Reply];
    expect(two.status).toBe(200);
    expect(fieldsOf(two)).toMatchObject({ policy: 'user', r: 3 });
    for (const [reply, left] of [
      [four, 2],
      [three, 1],
    ] as const) {
      expect(reply.status).toBe(429);
      expect(reply.body).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(fieldsOf(reply)).toMatchObject({ policy: 'user', r: left });
    }
    expect(one.status).toBe(200);
    expect(fieldsOf(one)).toMatchObject({ policy: 'user', r: 0 });
    expectRefused(malformed, 'user');
    // Only the served batches' cards exist (the owner reads on its own quota).
    const read = await call('GET', `/columns/${column.id}`, { from: newAddress(), token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body.cards).toHaveLength(3);
  });
});

describe('requests refused for their body or parameters count too', () => {
  it('counts POST /boards refused for its body or Idempotency-Key (400, 413, 415): r goes down on each, then 429', async () => {
    const { refused, over, user } = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const create = (options: Omit<CallOptions, 'from' | 'token'>) =>
        call('POST', '/boards', { from: address, token: user.token, ...options });
      const refused = [
        await create({ body: {} }),
        await create({ rawBody: '{"title":' }),
        // A bare key may not hold a comma (two keys joined): 400 before anything is claimed.
        await create({ body: { title: 'keyed' }, headers: { 'idempotency-key': 'one,two' } }),
        await create({ rawBody: '{"title":"plain"}', headers: { 'content-type': 'text/plain' } }),
        await create({ body: { title: 't'.repeat(70 * 1024) } }),
      ];
      const over = await create({ body: { title: 'valid, but over the quota' } });
      return { replies: [...refused, over], result: { refused, over, user } };
    });
    expect(refused.map((reply) => reply.status)).toEqual([400, 400, 400, 415, 413]);
    for (const reply of refused) {
      expect(reply.headers['content-type']).toBe('application/problem+json');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(refused.map((reply) => fieldsOf(reply))).toEqual(
      [4, 3, 2, 1, 0].map((r) => expect.objectContaining({ policy: 'user', q: USER_QUOTA, r })),
    );
    expectRefused(over, 'user');
    expect(await boardsOf(user.id)).toEqual([]);
  });

  it('counts POST /realtime/tickets refused for its body: r goes down on each 400, then 429 and no ticket', async () => {
    const { refused, over, user } = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const ask = (rawBody?: string) => call('POST', '/realtime/tickets', { from: address, token: user.token, rawBody });
      const refused: Reply[] = [];
      for (const body of ['{', '[]', '"ticket"', 'null', '{"a":']) refused.push(await ask(body));
      const over = await ask();
      return { replies: [...refused, over], result: { refused, over, user } };
    });
    expect(refused.map((reply) => reply.status)).toEqual([400, 400, 400, 400, 400]);
    expect(refused.map((reply) => fieldsOf(reply))).toEqual(
      [4, 3, 2, 1, 0].map((r) => expect.objectContaining({ policy: 'user', q: USER_QUOTA, r })),
    );
    expectRefused(over, 'user');
    expect(over.body.ticket).toBeUndefined();
    expect(await ticketsOf(user.id)).toEqual([]);
  });

  it('counts every token route refused for its parameters or body: past the quota, each answers 429, not 400', async () => {
    const tokenRows = Object.values(routes as Record<string, RouteRow>).filter((row) => rateLimitOf(row) === 'user');
    // Every one of these requests is a 400 within the quota: an id that is not a UUID, or (a row
    // without one) a body that is not JSON. Counted, each finds the quota spent.
    const { spent, refused } = await inOneWindow(async () => {
      const user = await newUser();
      await withHalfAWindowLeft();
      const address = newAddress();
      const spent: Reply[] = [];
      for (let i = 0; i < USER_QUOTA; i++) spent.push(await call('GET', '/auth/me', { from: address, token: user.token }));
      const refused: { id: string; reply: Reply }[] = [];
      for (const row of tokenRows) {
        const path = row.path.replace(/\{[^}]+\}/g, 'not-a-uuid');
        refused.push({ id: row.id, reply: await call(row.method, path, { from: address, token: user.token, rawBody: '{' }) });
      }
      return { replies: [...spent, ...refused.map(({ reply }) => reply)], result: { spent, refused } };
    });
    expect(spent.map((reply) => reply.status)).toEqual(Array(USER_QUOTA).fill(200));
    expect(tokenRows.map((row) => row.id)).toEqual(expect.arrayContaining(['boards.create', 'realtime.tickets', 'cards.move']));
    expect(refused.map(({ id, reply }) => [id, reply.status])).toEqual(refused.map(({ id }) => [id, 429]));
    for (const { reply } of refused) expectRefused(reply, 'user');
  });
});

describe('what is not counted', () => {
  it('carries no RateLimit fields on health, the documents and unknown paths', async () => {
    const address = newAddress();
    for (const path of ['/health', '/openapi.json', '/docs', '/no-such-path']) {
      const reply = await call('GET', path, { from: address });
      expect(reply.status).toBeLessThan(500);
      expect(reply.headers).not.toHaveProperty('ratelimit');
      expect(reply.headers).not.toHaveProperty('ratelimit-policy');
    }
  });
});
