import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CognitoIdentityProviderClient, ListUsersCommand } from '@aws-sdk/client-cognito-identity-provider';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { identify, isDead, type ProcessIdentity, waitUntilDead } from '../support/processes';

/**
 * Failure behaviour against real emulators: each case runs its OWN local stack
 * on a fresh data directory, kills one backing process by its pid, checks the answers, then
 * restarts the stack on the same directory and checks what was (not) written. The whole table
 * and the user pool are read directly, not only through the API, so a partial write cannot hide
 * behind a route that does not show it.
 */

/** Generous enough for the SDK's retries against a dead endpoint; a hang fails the test. */
const FETCH_TIMEOUT_MS = 20_000;

// --- processes -----------------------------------------------------------------------------------

// --- stacks --------------------------------------------------------------------------------------

/** What the stack writes to `<dataDir>/local-env.json` on every start (ports change per start). */
interface LocalEnv {
  AWS_REGION: string;
  AWS_ENDPOINT_URL_DYNAMODB: string;
  AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: string;
  TABLE_NAME: string;
  USER_POOL_ID: string;
}

interface Started {
  stack: RunningStack;
  url: string;
  env: LocalEnv;
  dynamodb: ProcessIdentity;
  cognito: ProcessIdentity;
  all: ProcessIdentity[];
}

const live = new Map<RunningStack, ProcessIdentity[]>();
const dataDirs: string[] = [];

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'task-board-failures-'));
  dataDirs.push(dir);
  return dir;
}

async function start(dataDir: string): Promise<Started> {
  const stack = await startStackProcess(dataDir);
  const all = [stack.child.pid!, stack.pids.dynamodb, stack.pids.cognito].map(identify);
  live.set(stack, all);
  const env = JSON.parse(readFileSync(join(dataDir, 'local-env.json'), 'utf8')) as LocalEnv;
  return { stack, url: stack.url, env, dynamodb: all[1]!, cognito: all[2]!, all };
}

/** Stops the stack by its pid; every process it started must then be gone. */
async function stop(started: Started): Promise<void> {
  await stopStackProcess(started.stack.child);
  live.delete(started.stack);
  expect(started.all.filter((p) => !isDead(p)).map((p) => p.pid)).toEqual([]);
}

async function kill(target: ProcessIdentity): Promise<void> {
  process.kill(target.pid, 'SIGKILL');
  await waitUntilDead(target);
}

afterAll(async () => {
  const leftovers: number[] = [];
  for (const [stack, processes] of live) {
    await stopStackProcess(stack.child).catch(() => undefined);
    leftovers.push(...processes.filter((p) => !isDead(p)).map((p) => p.pid));
  }
  live.clear();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  expect(leftovers).toEqual([]);
});

// --- HTTP ----------------------------------------------------------------------------------------

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

async function send(url: string, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  const text = await response.text();
  const body = text && /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text;
  return { status: response.status, headers: response.headers, body };
}

function expectStatus(reply: Reply, status: number): any {
  expect({ status: reply.status, body: reply.body }).toEqual({ status, body: expect.anything() });
  return reply.body;
}

/** 503 problem+json with a numeric Retry-After, and nothing about the failed connection in it. */
function expectUnavailable(reply: Reply): void {
  expect({
    status: reply.status,
    type: reply.headers.get('content-type'),
    retryAfter: reply.headers.get('retry-after'),
  }).toEqual({ status: 503, type: 'application/problem+json', retryAfter: expect.stringMatching(/^\d+$/) });
  expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(reply.body).toMatchObject({
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail: expect.any(String),
  });
  expect(JSON.stringify(reply.body)).not.toMatch(/ECONN|EPIPE|127\.0\.0\.1|socket|dynamodb|cognito|\bat \S+ \(/i);
}

interface Account {
  email: string;
  password: string;
  token: string;
  id: string;
}

const subjectOf = (token: string): string => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).sub;

function credentials(): Omit<Account, 'token' | 'id'> & { display_name: string } {
  return { email: `failure-${randomUUID()}@example.test`, password: `pw-${randomUUID()}`, display_name: 'Failure Test' };
}

async function register(url: string, who = credentials()): Promise<Account> {
  const body = expectStatus(await send(url, 'POST', '/auth/register', { body: who }), 201);
  return { email: who.email, password: who.password, token: body.token, id: subjectOf(body.token) };
}

async function create(url: string, token: string, path: string, body: unknown): Promise<any> {
  return expectStatus(await send(url, 'POST', path, { token, body }), 201);
}

// --- direct reads of the emulators ----------------------------------------------------------------

type Row = Record<string, unknown> & { pk: string; sk: string };

/** Every item of the table, strongly consistent, in key order. */
async function scanTable(env: LocalEnv): Promise<Row[]> {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
      region: env.AWS_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  try {
    const rows: Row[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({ TableName: env.TABLE_NAME, ConsistentRead: true, ExclusiveStartKey: startKey }),
      );
      rows.push(...((page.Items ?? []) as Row[]));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return rows.sort((a, b) => (a.pk === b.pk ? a.sk.localeCompare(b.sk) : a.pk.localeCompare(b.pk)));
  } finally {
    client.destroy();
  }
}

/** Every user in the pool with this email (the emulator is asked directly, not through the service). */
async function poolUsersWithEmail(env: LocalEnv, email: string): Promise<string[]> {
  const client = new CognitoIdentityProviderClient({
    endpoint: env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
    region: env.AWS_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const found: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListUsersCommand({ UserPoolId: env.USER_POOL_ID, PaginationToken: token }));
      for (const user of page.Users ?? []) {
        const mail = user.Attributes?.find((a) => a.Name === 'email')?.Value;
        if (mail?.toLowerCase() === email.toLowerCase() || user.Username?.toLowerCase() === email.toLowerCase())
          found.push(user.Username!);
      }
      token = page.PaginationToken;
    } while (token);
    return found;
  } finally {
    client.destroy();
  }
}

const rowsMentioning = (rows: Row[], text: string) =>
  rows.filter((row) => JSON.stringify(row).toLowerCase().includes(text.toLowerCase()));

// --- the cases -----------------------------------------------------------------------------------

describe('DynamoDB Local killed', () => {
  it('requests answer 503 with Retry-After in bounded time, and nothing of them is written', async () => {
    const dataDir = freshDataDir();
    const first = await start(dataDir);
    const user = await register(first.url);
    const board = await create(first.url, user.token, '/boards', { title: 'Before the crash' });
    const todo = await create(first.url, user.token, `/boards/${board.id}/columns`, { title: 'To do' });
    const done = await create(first.url, user.token, `/boards/${board.id}/columns`, { title: 'Done' });
    const cards = [];
    for (const title of ['one', 'two']) cards.push(await create(first.url, user.token, `/columns/${todo.id}/cards`, { title }));
    cards.push(await create(first.url, user.token, `/columns/${done.id}/cards`, { title: 'three' }));

    const treeBefore = expectStatus(await send(first.url, 'GET', `/boards/${board.id}`, { token: user.token }), 200);
    const listBefore = expectStatus(await send(first.url, 'GET', '/boards', { token: user.token }), 200);
    expect(listBefore).toEqual([board]);
    const tableBefore = await scanTable(first.env);
    expect(rowsMentioning(tableBefore, board.id).length).toBeGreaterThan(0);

    await kill(first.dynamodb);

    // Writes of every shape (transaction, conditional update) and reads: each a 503, none hangs.
    expectUnavailable(await send(first.url, 'POST', `/columns/${todo.id}/cards`, { token: user.token, body: { title: 'lost' } }));
    expectUnavailable(await send(first.url, 'PATCH', `/boards/${board.id}`, { token: user.token, body: { title: 'Renamed' } }));
    expectUnavailable(await send(first.url, 'GET', '/boards', { token: user.token }));
    expectUnavailable(await send(first.url, 'GET', `/boards/${board.id}`, { token: user.token }));
    expectUnavailable(await send(first.url, 'POST', '/boards', { token: user.token, body: { title: 'Never created' } }));
    expectUnavailable(
      await send(first.url, 'PATCH', `/cards/${cards[0].id}/move`, { token: user.token, body: { target_column_id: done.id } }),
    );
    // The function itself is alive: a route that needs no table still answers.
    expectStatus(await send(first.url, 'GET', '/health'), 200);
    await stop(first);

    const second = await start(dataDir);
    try {
      // No partial write anywhere in the table: item for item what it was before the kill.
      expect(await scanTable(second.env)).toEqual(tableBefore);
      // And through the API, with the token issued before the crash.
      expect(expectStatus(await send(second.url, 'GET', `/boards/${board.id}`, { token: user.token }), 200)).toEqual(treeBefore);
      expect(expectStatus(await send(second.url, 'GET', '/boards', { token: user.token }), 200)).toEqual(listBefore);
      // The failed card create left no version bump behind that would block the next create.
      const next = await create(second.url, user.token, `/columns/${todo.id}/cards`, { title: 'after the restart' });
      expect(next.position).toBeGreaterThan(Math.max(...cards.slice(0, 2).map((c) => c.position)));
      const renamed = expectStatus(
        await send(second.url, 'PATCH', `/boards/${board.id}`, { token: user.token, body: { title: 'Renamed' } }),
        200,
      );
      expect(renamed.title).toBe('Renamed');
    } finally {
      await stop(second);
    }
  });

  it('killed while card creates are in flight: each answer is 201 or 503, and every card is whole or absent', async () => {
    const dataDir = freshDataDir();
    const first = await start(dataDir);
    const user = await register(first.url);
    const board = await create(first.url, user.token, '/boards', { title: 'Burst' });
    const column = await create(first.url, user.token, `/boards/${board.id}/columns`, { title: 'Busy' });

    // A burst into one column (they contend for the column's card version, so they overlap in
    // time); DynamoDB Local is killed as soon as the first one has been answered.
    const titles = Array.from({ length: 24 }, (_, i) => `burst-${i}`);
    let killed: Promise<void> | undefined;
    const replies = await Promise.all(
      titles.map(async (title) => {
        const reply = await send(first.url, 'POST', `/columns/${column.id}/cards`, { token: user.token, body: { title } });
        killed ??= kill(first.dynamodb);
        return reply;
      }),
    );
    await killed;
    for (const reply of replies) {
      if (reply.status !== 201) expectUnavailable(reply);
    }
    const acknowledged = replies.filter((r) => r.status === 201).map((r) => r.body as { id: string; title: string });
    expect(acknowledged.length).toBeGreaterThan(0);
    await stop(first);

    const second = await start(dataDir);
    try {
      const rows = await scanTable(second.env);
      const cardItems = rows.filter((row) => row.type === 'card' && row.column_id === column.id);
      const cardLookups = rows.filter((row) => row.type === 'card_lookup' && row.board_id === board.id);
      const cardIds = rows.filter((row) => row.type === 'card_ids' && row.board_id === board.id);
      const columnLookup = rows.find((row) => row.pk === `COLUMN#${column.id}` && row.sk === '#LOOKUP');
      const stored = cardItems.map((row) => row.id as string).sort();

      // Atomic per card: the column's card version counts exactly the cards whose transaction
      // committed. Each card reaches its board through the board's one prefix item, which was
      // written with the board: no lookup of its own to leave behind or to miss.
      expect(columnLookup?.card_version).toBe(stored.length);
      expect(cardLookups).toEqual([]);
      expect(cardIds).toHaveLength(1);
      for (const id of stored) expect(id.startsWith(cardIds[0]!.pk.replace(/^CARDIDS#/, ''))).toBe(true);
      // Every stored card is one that was sent, once, and matches its 201 where there was one.
      // Not asserted: that every 201 survived. DynamoDB Local acknowledges a TransactWriteItems a
      // few milliseconds before it is durable (a SIGKILL right after the answer can lose it; real
      // DynamoDB is durable on acknowledgement), so that would test the emulator, not the service.
      expect(cardItems.every((row) => titles.includes(row.title as string))).toBe(true);
      for (const card of acknowledged) {
        const row = cardItems.find((item) => item.id === card.id);
        if (row) expect(row.title).toBe(card.title);
      }
      expect(new Set(cardItems.map((row) => row.title)).size).toBe(cardItems.length);
      // Positions stay distinct, and the API shows the same cards.
      expect(new Set(cardItems.map((row) => row.position)).size).toBe(cardItems.length);
      const tree = expectStatus(await send(second.url, 'GET', `/boards/${board.id}`, { token: user.token }), 200);
      expect(tree.columns[0].cards.map((c: { id: string }) => c.id).sort()).toEqual(stored);
    } finally {
      await stop(second);
    }
  });
});

describe('Cognito unavailable at registration', () => {
  it('is a 503, leaves no half-registered user, and the same email registers after a restart', async () => {
    const dataDir = freshDataDir();
    const first = await start(dataDir);
    const who = credentials();
    await kill(first.cognito);

    expectUnavailable(await send(first.url, 'POST', '/auth/register', { body: who }));
    expectUnavailable(await send(first.url, 'POST', '/auth/login', { body: { email: who.email, password: who.password } }));
    // Nothing of the user reached the table.
    expect(rowsMentioning(await scanTable(first.env), who.email)).toEqual([]);
    await stop(first);

    const second = await start(dataDir);
    try {
      expect(await poolUsersWithEmail(second.env, who.email)).toEqual([]);
      const account = await register(second.url, who);
      const login = expectStatus(
        await send(second.url, 'POST', '/auth/login', { body: { email: who.email, password: who.password } }),
        200,
      );
      expect(subjectOf(login.token)).toBe(account.id);
      expect(expectStatus(await send(second.url, 'GET', '/boards', { token: account.token }), 200)).toEqual([]);
      expect(await poolUsersWithEmail(second.env, who.email)).toHaveLength(1);
    } finally {
      await stop(second);
    }
  });
});

describe('DynamoDB unavailable at registration (Cognito up)', () => {
  it('is a 503, the Cognito user is removed again, and the same email registers after a restart', async () => {
    const dataDir = freshDataDir();
    const first = await start(dataDir);
    const who = credentials();
    await kill(first.dynamodb);

    expectUnavailable(await send(first.url, 'POST', '/auth/register', { body: who }));
    // The compensation ran while Cognito was still up: no user left behind that could log in
    // without a profile, or that would make the retry a 409.
    expect(await poolUsersWithEmail(first.env, who.email)).toEqual([]);
    expectStatus(await send(first.url, 'POST', '/auth/login', { body: { email: who.email, password: who.password } }), 401);
    await stop(first);

    const second = await start(dataDir);
    try {
      expect(await poolUsersWithEmail(second.env, who.email)).toEqual([]);
      expect(rowsMentioning(await scanTable(second.env), who.email)).toEqual([]);
      const account = await register(second.url, who);
      const login = expectStatus(
        await send(second.url, 'POST', '/auth/login', { body: { email: who.email, password: who.password } }),
        200,
      );
      expect(subjectOf(login.token)).toBe(account.id);
      expect(expectStatus(await send(second.url, 'GET', '/boards', { token: login.token }), 200)).toEqual([]);
      // Exactly one user and one profile for the email now.
      expect(await poolUsersWithEmail(second.env, who.email)).toHaveLength(1);
      const rows = rowsMentioning(await scanTable(second.env), who.email);
      expect(rows.map((row) => ({ pk: row.pk, sk: row.sk })).sort((a, b) => a.pk.localeCompare(b.pk))).toEqual([
        { pk: `EMAIL#${who.email.toLowerCase()}`, sk: '#EMAIL' },
        { pk: `USER#${account.id}`, sk: '#PROFILE' },
      ]);
    } finally {
      await stop(second);
    }
  });
});
