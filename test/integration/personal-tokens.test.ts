import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newPersonalTokenText } from '../../lib/domain/personal-tokens';
import {
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  type Reply,
  signIn,
  type TestUser,
  UUID,
  unknownId,
} from '../support/api';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { codeSentBy } from '../support/mail';
import { closeAllSockets, connect } from '../support/sockets';
import { eventually } from '../support/wait';

/**
 * Personal access tokens (docs/tokens.md) over a local stack of this file's own: traced (every
 * answer says which DynamoDB calls it made), logging at DEBUG (every line of it kept here, to
 * find no token in it), counting requests per user, a personal token's day 3 seconds long (so a
 * one-day token expires while the test watches; the others are made for 365 days, 18 minutes) and
 * sockets swept every 250 ms.
 */

const DAY_SECONDS = 3;
const dataDir = mkdtempSync(join(tmpdir(), 'task-board-tokens-'));
let stack: RunningStack | undefined;
let url: string;
/** Every line the stack printed since it started answering. */
let output = '';

beforeAll(async () => {
  stack = await startStackProcess(dataDir, {
    TASK_BOARD_TRACE: '1',
    LOG_LEVEL: 'DEBUG',
    PERSONAL_TOKEN_DAY_SECONDS: String(DAY_SECONDS),
    RATE_LIMIT_REQUESTS: '100000',
    AUTH_RATE_LIMIT_REQUESTS: '100000',
    LOCAL_SWEEP_MS: '250',
  });
  url = stack.url;
  for (const stream of [stack.child.stdout, stack.child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
  }
});

afterEach(closeAllSockets);

afterAll(async () => {
  await closeAllSockets();
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

// --- helpers -------------------------------------------------------------------------------------

interface Token {
  id: string;
  name: string;
  scopes: string[];
  board_ids: string[] | null;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  token: string;
}

/** Every token text this file was given: none may appear in the stack's output. */
const issued: string[] = [];

const as = (token: string) => ({ token, url });
const get = (path: string, token: string) => call('GET', path, as(token));

async function createToken(user: TestUser, body: Record<string, unknown>): Promise<Reply<Token>> {
  const reply = await call<Token>('POST', '/auth/tokens', { token: user.token, body, url });
  if (reply.status === 201) issued.push(reply.body.token);
  return reply;
}

async function newToken(user: TestUser, scopes: string[], extra: Record<string, unknown> = {}): Promise<Token> {
  const reply = await createToken(user, { name: 'A script', scopes, expires_in_days: 365, ...extra });
  if (reply.status !== 201) throw new Error(`token not created: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

const user = () => newUser(url);

/** The `iat` of an access token: the second Cognito issued it in. */
const issuedAtOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number }).iat;

/** Waits until the clock is past the second `at` (seconds since the epoch). */
async function untilNextSecond(at: number): Promise<void> {
  const left = (at + 1) * 1000 - Date.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left + 5));
}
const commandsOf = (reply: Reply) => reply.headers.get('x-trace-dynamodb-commands') ?? '';

function expectInvalidToken(reply: Reply) {
  expectProblem(reply, 401);
  expect(reply.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
}

function expectInsufficientScope(reply: Reply, scope?: string) {
  expect(expectProblem(reply, 403).code).toBe('insufficient_scope');
  expect(reply.headers.get('www-authenticate')).toBe(
    scope ? `Bearer error="insufficient_scope", scope="${scope}"` : 'Bearer error="insufficient_scope"',
  );
}

/** The token with one character of its random part changed: its checksum no longer matches. */
function flipped(token: string): string {
  const at = 10;
  return token.slice(0, at) + (token[at] === 'a' ? 'b' : 'a') + token.slice(at + 1);
}

// --- creating, listing, deleting -----------------------------------------------------------------

describe('POST /auth/tokens', () => {
  it('answers 201 with the token shown once: tbp_, 49 base62 characters, the given fields, null board_ids', async () => {
    const ada = await user();
    const before = Date.now();
    const reply = await createToken(ada, { name: 'CI', scopes: ['boards:read'], expires_in_days: 30 });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'CI',
      scopes: ['boards:read'],
      board_ids: null,
      created_at: expect.any(String),
      expires_at: expect.any(String),
      last_used_at: null,
      token: expect.stringMatching(/^tbp_[0-9A-Za-z]{49}$/),
    });
    const days = (Date.parse(reply.body.expires_at) - Date.parse(reply.body.created_at)) / 1000 / DAY_SECONDS;
    expect(days).toBe(30);
    expect(Date.parse(reply.body.created_at)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    // Listed without its text.
    const list = await get('/auth/tokens', ada.token);
    expect(list.status).toBe(200);
    const { token: _, ...listed } = reply.body;
    expect(list.body).toEqual([listed]);
  });

  it.each([
    ['no name', { scopes: ['boards:read'], expires_in_days: 1 }],
    ['an empty name', { name: '', scopes: ['boards:read'], expires_in_days: 1 }],
    ['a name of 101 characters', { name: 'x'.repeat(101), scopes: ['boards:read'], expires_in_days: 1 }],
    ['no scopes', { name: 'n', expires_in_days: 1 }],
    ['empty scopes', { name: 'n', scopes: [], expires_in_days: 1 }],
    ['an unknown scope', { name: 'n', scopes: ['boards:admin'], expires_in_days: 1 }],
    ['a scope twice', { name: 'n', scopes: ['boards:read', 'boards:read'], expires_in_days: 1 }],
    ['no expiry', { name: 'n', scopes: ['boards:read'] }],
    ['0 days', { name: 'n', scopes: ['boards:read'], expires_in_days: 0 }],
    ['366 days', { name: 'n', scopes: ['boards:read'], expires_in_days: 366 }],
    ['a fraction of a day', { name: 'n', scopes: ['boards:read'], expires_in_days: 1.5 }],
    ['days as a string', { name: 'n', scopes: ['boards:read'], expires_in_days: '30' }],
    ['empty board_ids', { name: 'n', scopes: ['boards:read'], expires_in_days: 1, board_ids: [] }],
    ['a board id that is no UUID', { name: 'n', scopes: ['boards:read'], expires_in_days: 1, board_ids: ['x'] }],
    ['51 boards', { name: 'n', scopes: ['boards:read'], expires_in_days: 1, board_ids: Array.from({ length: 51 }, randomUUID) }],
  ])('refuses %s with 400 and creates nothing', async (_, body) => {
    const ada = await user();
    expectProblem(await createToken(ada, body), 400);
    expect((await get('/auth/tokens', ada.token)).body).toEqual([]);
  });

  it('refuses board_ids naming a board the caller is not a member of (400), and accepts its own', async () => {
    const [ada, bob] = await Promise.all([user(), user()]);
    const [mine, theirs] = await Promise.all([newBoard(ada, 'Mine', url), newBoard(bob, 'Theirs', url)]);
    const body = { name: 'n', scopes: ['boards:read'], expires_in_days: 1 };
    expectProblem(await createToken(ada, { ...body, board_ids: [mine.id, theirs.id] }), 400);
    expectProblem(await createToken(ada, { ...body, board_ids: [unknownId()] }), 400);
    expect((await get('/auth/tokens', ada.token)).body).toEqual([]);
    const made = await createToken(ada, { ...body, board_ids: [mine.id] });
    expect(made.status).toBe(201);
    expect(made.body.board_ids).toEqual([mine.id]);
  });

  it('holds at most 20 tokens per user: of two made at once at 19, one is 201 and the other 409', async () => {
    const ada = await user();
    for (let i = 0; i < 19; i++) await newToken(ada, ['boards:read']);
    const both = await Promise.all(
      [0, 1].map(() => createToken(ada, { name: 'race', scopes: ['boards:read'], expires_in_days: 1 })),
    );
    expect(both.map((reply) => reply.status).sort()).toEqual([201, 409]);
    const refused = both.find((reply) => reply.status === 409)!;
    expect(expectProblem(refused, 409).detail).toContain('20');
    expect((await get('/auth/tokens', ada.token)).body).toHaveLength(20);
    // Deleting one frees its place.
    const list = (await get('/auth/tokens', ada.token)).body as Token[];
    expect((await call('DELETE', `/auth/tokens/${list[0]!.id}`, as(ada.token))).status).toBe(204);
    expect((await createToken(ada, { name: 'again', scopes: ['boards:read'], expires_in_days: 1 })).status).toBe(201);
  });

  it('lists newest first', async () => {
    const ada = await user();
    const first = await newToken(ada, ['boards:read']);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await newToken(ada, ['boards:write']);
    const list = (await get('/auth/tokens', ada.token)).body as Token[];
    expect(list.map((token) => token.id)).toEqual([second.id, first.id]);
  });

  it('needs a session token: a personal token is refused on the token routes with insufficient_scope (no scope)', async () => {
    const ada = await user();
    const pat = await newToken(ada, ['boards:read', 'boards:write', 'webhooks:admin']);
    const body = { name: 'n', scopes: ['boards:read'], expires_in_days: 1 };
    expectInsufficientScope(await call('POST', '/auth/tokens', { ...as(pat.token), body }));
    expectInsufficientScope(await get('/auth/tokens', pat.token));
    expectInsufficientScope(await call('DELETE', `/auth/tokens/${pat.id}`, as(pat.token)));
    expectInsufficientScope(await get('/auth/me', pat.token));
    // Before the body is looked at: a malformed one is refused for the token all the same.
    expectInsufficientScope(await call('POST', '/auth/tokens', { ...as(pat.token), body: { name: 7 } }));
  });
});

describe('DELETE /auth/tokens/{id}', () => {
  it("answers 404 for another user's token and an unknown id; the owner's delete is 204 and effective at once", async () => {
    const [ada, mallory] = await Promise.all([user(), user()]);
    const pat = await newToken(ada, ['boards:read']);
    expect((await get('/boards', pat.token)).status).toBe(200);
    expectProblem(await call('DELETE', `/auth/tokens/${pat.id}`, as(mallory.token)), 404);
    expectProblem(await call('DELETE', `/auth/tokens/${unknownId()}`, as(ada.token)), 404);
    expectProblem(await call('DELETE', '/auth/tokens/not-a-uuid', as(ada.token)), 400);
    expect((await get('/boards', pat.token)).status).toBe(200);
    expect((await call('DELETE', `/auth/tokens/${pat.id}`, as(ada.token))).status).toBe(204);
    expectInvalidToken(await get('/boards', pat.token));
    expectProblem(await call('DELETE', `/auth/tokens/${pat.id}`, as(ada.token)), 404);
    expect((await get('/auth/tokens', ada.token)).body).toEqual([]);
  });
});

// --- using a token -------------------------------------------------------------------------------

describe('a personal token as a bearer', () => {
  it('acts as its user on the routes its scopes allow, with one more read than a session token', async () => {
    const ada = await user();
    const board = await newBoard(ada, 'Scripted', url);
    const column = await newColumn(ada, board.id, 'To do', url);
    const reader = await newToken(ada, ['boards:read']);
    const writer = await newToken(ada, ['boards:write']);

    const bySession = await get(`/boards/${board.id}`, ada.token);
    const byToken = await get(`/boards/${board.id}`, reader.token);
    expect(byToken.status).toBe(200);
    expect(byToken.body).toEqual(bySession.body);
    // The token's item by its hash: one BatchGetItem before the route's own reads (and a write
    // of its first use beside them); a session token makes none of these.
    expect(
      commandsOf(byToken)
        .split(',')
        .filter((c) => c === 'BatchGetItem').length,
    ).toBe(
      commandsOf(bySession)
        .split(',')
        .filter((c) => c === 'BatchGetItem').length + 1,
    );
    expect(Number(byToken.headers.get('x-trace-dynamodb-sequential'))).toBeLessThanOrEqual(
      Number(bySession.headers.get('x-trace-dynamodb-sequential')) + 1,
    );

    const made = await call('POST', `/columns/${column.id}/cards`, { ...as(writer.token), body: { title: 'By a script' } });
    expect(made.status).toBe(201);
    expectInsufficientScope(
      await call('POST', `/columns/${column.id}/cards`, { ...as(reader.token), body: { title: 'x' } }),
      'boards:write',
    );
    expectInsufficientScope(await get(`/cards/${made.body.id}`, writer.token), 'boards:read');
    expectInsufficientScope(await get(`/boards/${board.id}/webhooks`, writer.token), 'webhooks:admin');
    // The scope comes before the input: a malformed body is still 403 for a token without the scope.
    expectInsufficientScope(
      await call('POST', `/columns/${column.id}/cards`, { ...as(reader.token), body: { title: 7 } }),
      'boards:write',
    );
    // And before the path's: a path id that is no UUID too.
    expectInsufficientScope(await get('/cards/not-a-uuid', writer.token), 'boards:read');
    // Then the input checks apply as for a session token.
    expectProblem(await call('POST', `/columns/${column.id}/cards`, { ...as(writer.token), body: { title: 7 } }), 400);
  });

  it('reaches the webhook routes with webhooks:admin only, and POST /boards with boards:write', async () => {
    const ada = await user();
    const board = await newBoard(ada, 'Hooks', url);
    const admin = await newToken(ada, ['webhooks:admin']);
    const listed = await get(`/boards/${board.id}/webhooks`, admin.token);
    expect(listed.status).toBe(200);
    expectInsufficientScope(await get(`/boards/${board.id}`, admin.token), 'boards:read');
    const writer = await newToken(ada, ['boards:write']);
    expect((await call('POST', '/boards', { ...as(writer.token), body: { title: 'Made by a script' } })).status).toBe(201);
    expectInsufficientScope(await call('POST', '/boards', { ...as(admin.token), body: { title: 'x' } }), 'boards:write');
  });

  it('is refused with 401 without any table read when one character is changed (the checksum)', async () => {
    const ada = await user();
    const pat = await newToken(ada, ['boards:read']);
    for (const wrong of [flipped(pat.token), pat.token.slice(0, -1), `${pat.token}A`, 'tbp_', `tbp_${'A'.repeat(49)}`]) {
      const reply = await get('/boards', wrong);
      expectInvalidToken(reply);
      // The address's count of a refused token is the only call made: the token's item is never read.
      expect(commandsOf(reply)).not.toContain('BatchGetItem');
    }
    // A well-formed token that was never issued (made by the same rules) is read, and refused alike.
    expectInvalidToken(await get('/boards', newPersonalTokenText()));
  });

  it('counts against its user\'s quota (policy "user"), a request refused for its scope included', async () => {
    const ada = await user();
    const pat = await newToken(ada, ['boards:read']);
    const served = await get('/boards', pat.token);
    expect(served.headers.get('ratelimit-policy')).toMatch(/^"user";/);
    const refused = await call('POST', '/boards', { ...as(pat.token), body: { title: 'x' } });
    expectInsufficientScope(refused, 'boards:write');
    expect(refused.headers.get('ratelimit-policy')).toMatch(/^"user";/);
    const left = (reply: Reply) => Number(/r=(\d+)/.exec(reply.headers.get('ratelimit') ?? '')?.[1]);
    expect(left(refused)).toBe(left(served) - 1);
    // A session token of the same user draws on the same count.
    const session = await get('/boards', ada.token);
    expect(left(session)).toBe(left(refused) - 1);
  });

  it('records last_used_at within 60 s of a use', async () => {
    const ada = await user();
    const pat = await newToken(ada, ['boards:read']);
    const before = Date.now();
    const first = await get('/boards', pat.token);
    expect(first.status).toBe(200);
    const [listed] = (await get('/auth/tokens', ada.token)).body as Token[];
    expect(listed!.last_used_at).not.toBeNull();
    expect(Date.parse(listed!.last_used_at!)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 60_000);
    // A second use within the minute writes nothing more: only the rate limiter's count is left.
    const updates = (reply: Reply) =>
      commandsOf(reply)
        .split(',')
        .filter((command) => command === 'UpdateItem').length;
    const again = await get('/boards', pat.token);
    expect([updates(first), updates(again)]).toEqual([2, 1]);
  });
});

describe('a token limited to boards (board_ids)', () => {
  it('answers any other board as a non-member would, lists only its boards, and may not create boards', async () => {
    const ada = await user();
    const [inside, outside] = await Promise.all([newBoard(ada, 'Inside', url), newBoard(ada, 'Outside', url)]);
    const [inCol, outCol] = await Promise.all([newColumn(ada, inside.id, 'In', url), newColumn(ada, outside.id, 'Out', url)]);
    const outCard = await newCard(ada, outCol.id, { title: 'Out of reach' }, url);
    const pat = await newToken(ada, ['boards:read', 'boards:write'], { board_ids: [inside.id] });

    expect((await get(`/boards/${inside.id}`, pat.token)).status).toBe(200);
    expect(((await get('/boards', pat.token)).body as { id: string }[]).map((board) => board.id)).toEqual([inside.id]);
    expect(expectProblem(await get(`/boards/${outside.id}`, pat.token), 403).code).toBe('forbidden');
    expectProblem(await get(`/cards/${outCard.id}`, pat.token), 403);
    expectProblem(await call('POST', `/columns/${outCol.id}/cards`, { ...as(pat.token), body: { title: 'x' } }), 403);
    expectProblem(await get(`/boards/${unknownId()}`, pat.token), 403);
    // A card moved from its board to one outside: as for a non-member's target.
    const inCard = await newCard(ada, inCol.id, { title: 'In reach' }, url);
    expectProblem(
      await call('PATCH', `/cards/${inCard.id}/move`, { ...as(pat.token), body: { target_column_id: outCol.id } }),
      403,
    );
    expectInsufficientScope(await call('POST', '/boards', { ...as(pat.token), body: { title: 'x' } }));
  });

  it('is answered 403 on a board its user has left', async () => {
    const [ada, bob] = await Promise.all([user(), user()]);
    const board = await newBoard(ada, 'Shared', url);
    expect((await call('POST', `/boards/${board.id}/members`, { ...as(ada.token), body: { email: bob.email } })).status).toBe(
      201,
    );
    const pat = await newToken(bob, ['boards:read'], { board_ids: [board.id] });
    expect((await get(`/boards/${board.id}`, pat.token)).status).toBe(200);
    expect((await call('DELETE', `/boards/${board.id}/members/${bob.id}`, as(bob.token))).status).toBe(204);
    expectProblem(await get(`/boards/${board.id}`, pat.token), 403);
    expect((await get('/boards', pat.token)).body).toEqual([]);
  });
});

// --- revocation ----------------------------------------------------------------------------------

describe('every token of the account is deleted', () => {
  it('by a password change', async () => {
    const ada = await user();
    const pat = await newToken(ada, ['boards:read']);
    const body = { current_password: ada.password, new_password: `${ada.password}-2` };
    expect((await call('POST', '/auth/password', { ...as(ada.token), body })).status).toBe(204);
    expectInvalidToken(await get('/boards', pat.token));
    // Signed in again with the new password: the list is empty, and the count went with them.
    const session = await signIn(ada.email, body.new_password, url);
    expect((await get('/auth/tokens', session.token)).body).toEqual([]);
    const again = await createToken(session, { name: 'n', scopes: ['boards:read'], expires_in_days: 1 });
    expect(again.status).toBe(201);
  });

  it('and a session from before the change can mint no new one, while one begun after can', async () => {
    const ada = await user();
    const stolen = ada.token;
    // Cognito stamps a session in whole seconds: the change comes in a later second than it.
    await untilNextSecond(issuedAtOf(stolen));
    const body = { current_password: ada.password, new_password: `${ada.password}-4` };
    expect((await call('POST', '/auth/password', { ...as(ada.token), body })).status).toBe(204);
    const minted = await createToken({ ...ada, token: stolen }, { name: 'kept', scopes: ['boards:write'], expires_in_days: 365 });
    expectInvalidToken(minted);
    const session = await signIn(ada.email, body.new_password, url);
    expect((await get('/auth/tokens', session.token)).body).toEqual([]);
    expect((await createToken(session, { name: 'n', scopes: ['boards:read'], expires_in_days: 1 })).status).toBe(201);
  });

  it('by a password reset', async () => {
    const ada = await user();
    const pat = await newToken(ada, ['boards:read']);
    const code = await codeSentBy(
      ada.email,
      () => call('POST', '/auth/password/forgot', { body: { email: ada.email }, url }),
      url,
    );
    const reset = { email: ada.email, code, new_password: `${ada.password}-3` };
    expect((await call('POST', '/auth/password/reset', { body: reset, url })).status).toBe(204);
    expectInvalidToken(await get('/boards', pat.token));
  });

  it('by the account deletion, from the next request on', async () => {
    const ada = await user();
    const pat = await newToken(ada, ['boards:read', 'boards:write']);
    expect((await call('DELETE', '/auth/account', { ...as(ada.token), body: { password: ada.password } })).status).toBe(204);
    expectInvalidToken(await get('/boards', pat.token));
    expectInvalidToken(await call('POST', '/boards', { ...as(pat.token), body: { title: 'x' } }));
  });
});

describe('expiry', () => {
  it('refuses a token past its expires_at with 401, and closes its socket with token.expired', async () => {
    const ada = await user();
    const board = await newBoard(ada, 'Short', url);
    const pat = await newToken(ada, ['boards:read'], { expires_in_days: 1 });
    const expiresAtMs = Date.parse(pat.expires_at);
    const socket = await connect({ token: pat.token }, 'personal token socket', url);
    if (Date.now() < expiresAtMs - 500) await socket.watch(board.id);
    await eventually(async () => expectInvalidToken(await get('/boards', pat.token)), 60_000, 250);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAtMs);
    expect(await socket.nextOfType('token.expired')).toEqual({ type: 'token.expired' });
    await socket.closed();
  });
});

describe('sockets', () => {
  it('a socket opened with a token closes (token.expired) within 60 s of its deletion; a limited token watches only its boards', async () => {
    const ada = await user();
    const [inside, outside] = await Promise.all([newBoard(ada, 'Watched', url), newBoard(ada, 'Not watched', url)]);
    const pat = await newToken(ada, ['boards:read'], { board_ids: [inside.id] });
    const socket = await connect({ token: pat.token }, 'personal token socket', url);
    await socket.watch(inside.id);
    expect(await socket.watchReply(outside.id)).toMatchObject({ type: 'error', code: 'forbidden', board_id: outside.id });
    const other = await connect(ada, 'session socket', url);
    await other.ping();
    const deleted = Date.now();
    expect((await call('DELETE', `/auth/tokens/${pat.id}`, as(ada.token))).status).toBe(204);
    expect(await socket.nextOfType('token.expired', 60_000)).toEqual({ type: 'token.expired' });
    await socket.closed();
    expect(Date.now() - deleted).toBeLessThan(60_000);
    // The session's own socket stays open.
    await other.ping();
  });
});

// --- what never leaves the service ---------------------------------------------------------------

describe('the token text', () => {
  it('appears in no line the stack printed (its id does)', async () => {
    const ada = await user();
    const pat = await newToken(ada, ['boards:read']);
    // A refused use, an allowed one, one refused for its scope, one mistyped.
    await get('/boards', pat.token);
    await call('POST', '/boards', { ...as(pat.token), body: { title: 'x' } });
    await get('/boards', flipped(pat.token));
    await call('DELETE', `/auth/tokens/${pat.id}`, as(ada.token));
    await get('/boards', pat.token);
    // The request lines name the token by its id.
    await eventually(async () => expect(output).toContain(`"tokenId":"${pat.id}"`), 10_000, 100);
    for (const text of issued) {
      expect(output).not.toContain(text);
      // Nor its random part alone.
      expect(output).not.toContain(text.slice(4, 40));
    }
  });
});
