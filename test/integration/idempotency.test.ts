import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { idempotencyRecordKey } from '../../lib/data/idempotency';
import { keyHash } from '../../lib/data/table';
import { fingerprintOf } from '../../lib/http/idempotency';
import {
  addMember,
  call,
  expectProblem,
  newBoard,
  newColumn,
  newUser,
  type Reply,
  readTree,
  subjectOf,
  type TestUser,
  uniqueEmail,
} from '../support/api';
import { useLocalTable } from '../support/local-table';

/**
 * Safe retries: every POST that creates something honours an Idempotency-Key (IETF
 * draft). Checked over HTTP on the local stack: a retry gets the first answer and creates nothing,
 * another request with the key is 422, a key in use is 409, failures keep nothing, keys belong to
 * their user, and without the header nothing changes.
 */

const table = useLocalTable();

/** The record the table keeps for a key, read as the service reads it (strongly consistent). */
const keptRecord = (userId: string, key: string) =>
  table.client.send(new GetCommand({ TableName: table.name, Key: idempotencyRecordKey({ userId, key }), ConsistentRead: true }));

const post = (user: TestUser, path: string, body: unknown, key?: string, rawBody?: string) =>
  call('POST', path, {
    token: user.token,
    body,
    rawBody,
    headers: {
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...(rawBody ? { 'content-type': 'application/json' } : {}),
    },
  });
const boardTitles = async (user: TestUser) =>
  ((await call('GET', '/boards', { token: user.token })).body as { title: string }[]).map((b) => b.title);
const replayed = (reply: Reply) => reply.headers.get('idempotent-replayed');

describe('Idempotency-Key on the POSTs that create something', () => {
  it('a retry with the same key and body answers the first answer, marked replayed, and creates nothing more', async () => {
    const user = await newUser();
    const key = randomUUID();
    const title = `board ${key}`;
    const before = Math.floor(Date.now() / 1000);
    const first = await post(user, '/boards', { title }, key);
    const retry = await post(user, '/boards', { title }, key);
    expect(first.status).toBe(201);
    expect(replayed(first)).toBeNull();
    expect({ status: retry.status, body: retry.body }).toEqual({ status: first.status, body: first.body });
    expect(replayed(retry)).toBe('true');
    expect(await boardTitles(user)).toEqual([title]);
    // What the table keeps: the first answer, for 24 hours, under the caller's key.
    const fingerprint = fingerprintOf('boards.create', { params: {}, body: { title } });
    const stored = await keptRecord(user.id, key);
    expect(stored.Item).toMatchObject({ type: 'idempotency', status: 'completed', fingerprint });
    expect(JSON.parse(stored.Item!.answer as string)).toEqual({ status: 201, body: first.body });
    expect(stored.Item!.ttl).toBeGreaterThanOrEqual(before + 86_400);
    expect(stored.Item!.ttl).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 86_400);
  });

  it('two first requests with the same key at once create one board: one 201, the other 409 or the same 201 replayed', async () => {
    const user = await newUser();
    for (let round = 0; round < 5; round++) {
      const key = randomUUID();
      const replies = await Promise.all([1, 2].map(() => post(user, '/boards', { title: `race ${round}` }, key)));
      const created = replies.filter((reply) => reply.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((reply) => reply.body.id)).size).toBe(1);
      for (const reply of replies.filter((r) => r.status !== 201)) {
        expect(expectProblem(reply, 409)).toMatchObject({ code: 'idempotency_key_in_use' });
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    }
    expect((await boardTitles(user)).sort()).toEqual(['race 0', 'race 1', 'race 2', 'race 3', 'race 4']);
  });

  it('the same request is recognised whatever its key order or spacing, and the key as a quoted string or bare', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const key = randomUUID();
    const first = await post(user, `/columns/${column.id}/cards`, { title: 'Card', description: 'd' }, `"${key}"`);
    const retry = await post(user, `/columns/${column.id}/cards`, undefined, key, '{ "description": "d",\n  "title": "Card" }');
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(replayed(retry)).toBe('true');
    const tree = await readTree(user, board.id);
    expect(tree.columns[0]!.cards.map((card) => card.id)).toEqual([first.body.id]);
  });

  it('the same key with another body, another path or another operation is 422 and changes nothing', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const other = await newBoard(user, 'other');
    const key = randomUUID();
    expect((await post(user, `/boards/${board.id}/columns`, { title: 'To do' }, key)).status).toBe(201);
    const reused = [
      await post(user, `/boards/${board.id}/columns`, { title: 'Doing' }, key),
      await post(user, `/boards/${other.id}/columns`, { title: 'To do' }, key),
      await post(user, '/boards', { title: 'To do' }, key),
    ];
    for (const reply of reused) {
      expect(expectProblem(reply, 422)).toMatchObject({ code: 'idempotency_key_reused' });
    }
    expect((await readTree(user, board.id)).columns.map((c) => c.title)).toEqual(['To do']);
    expect((await readTree(user, other.id)).columns).toEqual([]);
    expect((await boardTitles(user)).sort()).toEqual(['A board', 'other']);
  });

  it('keys belong to their user: the same key and body from two users are two requests', async () => {
    const [ann, bob] = [await newUser(), await newUser()];
    const key = randomUUID();
    const fromAnn = await post(ann, '/boards', { title: 'Plans' }, key);
    const fromBob = await post(bob, '/boards', { title: 'Plans' }, key);
    expect([fromAnn.status, fromBob.status]).toEqual([201, 201]);
    expect(replayed(fromBob)).toBeNull();
    expect(fromBob.body.id).not.toBe(fromAnn.body.id);
    expect(fromBob.body.owner_id).not.toBe(fromAnn.body.owner_id);
  });

  it('a retried member add answers the first 201 instead of "already a member"', async () => {
    const [owner, teammate] = [await newUser(), await newUser()];
    const board = await newBoard(owner);
    const key = randomUUID();
    const body = { email: teammate.email };
    const first = await post(owner, `/boards/${board.id}/members`, body, key);
    const retry = await post(owner, `/boards/${board.id}/members`, body, key);
    expect(first.status).toBe(201);
    expect({ status: retry.status, body: retry.body, replayed: replayed(retry) }).toEqual({
      status: 201,
      body: first.body,
      replayed: 'true',
    });
    // Without a key the same retry is the conflict it always was.
    expectProblem(await post(owner, `/boards/${board.id}/members`, body), 409);
  });

  it('a request that failed keeps nothing: its retry with the same key runs again', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const existing = await post(user, `/boards/${board.id}/labels`, { name: 'Bug', color: '#ff0000' });
    expect(existing.status).toBe(201);
    const key = randomUUID();
    const body = { name: 'bug', color: '#00ff00' };
    expect(expectProblem(await post(user, `/boards/${board.id}/labels`, body, key), 409)).toMatchObject({ code: 'conflict' });
    expect((await call('DELETE', `/labels/${existing.body.id}`, { token: user.token })).status).toBe(204);
    const retry = await post(user, `/boards/${board.id}/labels`, body, key);
    expect(retry.status).toBe(201);
    expect(replayed(retry)).toBeNull();
    expect(retry.body).toMatchObject({ name: 'bug', color: '#00ff00' });
  });

  it('while the first request with a key is still running, another is 409 with Retry-After; once its claim lapses, the key works', async () => {
    const user = await newUser();
    const key = randomUUID();
    const body = { title: 'Slow' };
    const record = {
      userId: user.id,
      key,
      fingerprint: fingerprintOf('boards.create', { params: {}, body }),
    };
    const now = Math.floor(Date.now() / 1000);
    await table.client.send(
      new PutCommand({
        TableName: table.name,
        Item: {
          ...idempotencyRecordKey(record),
          type: 'idempotency',
          status: 'in_progress',
          fingerprint: record.fingerprint,
          locked_until: now + 60,
          ttl: now + 86_400,
        },
      }),
    );
    const busy = await post(user, '/boards', body, key);
    expect(expectProblem(busy, 409)).toMatchObject({ code: 'idempotency_key_in_use' });
    // Creates answer in milliseconds: the client is asked back soon, not when the claim would lapse.
    expect(Number(busy.headers.get('retry-after'))).toBe(2);
    expect(await boardTitles(user)).toEqual([]);

    // The first request crashed: its claim lapses after the function's timeout.
    await table.client.send(
      new UpdateCommand({
        TableName: table.name,
        Key: idempotencyRecordKey(record),
        UpdateExpression: 'SET locked_until = :past',
        ExpressionAttributeValues: { ':past': now - 1 },
      }),
    );
    const retry = await post(user, '/boards', body, key);
    expect(retry.status).toBe(201);
    expect(await boardTitles(user)).toEqual(['Slow']);
  });

  it('a key is remembered for 24 hours: an expired record (not yet removed by TTL) does not replay', async () => {
    const user = await newUser();
    const key = randomUUID();
    const first = await post(user, '/boards', { title: 'Day one' }, key);
    expect(first.status).toBe(201);
    await table.client.send(
      new UpdateCommand({
        TableName: table.name,
        Key: idempotencyRecordKey({ userId: user.id, key }),
        UpdateExpression: 'SET #ttl = :past',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    const later = await post(user, '/boards', { title: 'Day one' }, key);
    expect(later.status).toBe(201);
    expect(replayed(later)).toBeNull();
    expect(later.body.id).not.toBe(first.body.id);
  });

  it('a malformed key is 400 before anything is created', async () => {
    const user = await newUser();
    // Empty, too long, not ASCII, two keys (two headers arrive joined by a comma), a broken quoted string.
    for (const key of ['', '""', 'x'.repeat(256), 'clé', 'one, two', '"open', 'a"b']) {
      const reply = await post(user, '/boards', { title: 'Never' }, key);
      expect(expectProblem(reply, 400).detail).toMatch(/Idempotency-Key/);
    }
    expect(await boardTitles(user)).toEqual([]);
  });

  it('a key with inner spaces is a key (printable ASCII, as a Structured Field string may hold)', async () => {
    const user = await newUser();
    const key = `retry ${randomUUID()}`;
    const first = await post(user, '/boards', { title: 'Spaced' }, key);
    const again = await post(user, '/boards', { title: 'Spaced' }, key);
    expect([first.status, again.status, replayed(again), again.body.id]).toEqual([201, 201, 'true', first.body.id]);
    expect(await boardTitles(user)).toEqual(['Spaced']);
  });

  it('without the header a retry creates again, and the key is ignored on routes that create nothing', async () => {
    const user = await newUser();
    await post(user, '/boards', { title: 'Twice' });
    await post(user, '/boards', { title: 'Twice' });
    expect(await boardTitles(user)).toEqual(['Twice', 'Twice']);
    const board = await newBoard(user);
    const key = randomUUID();
    const renames = [
      await call('PATCH', `/boards/${board.id}`, {
        token: user.token,
        body: { title: 'One' },
        headers: { 'idempotency-key': key },
      }),
      await call('PATCH', `/boards/${board.id}`, {
        token: user.token,
        body: { title: 'Two' },
        headers: { 'idempotency-key': key },
      }),
    ];
    expect(renames.map((reply) => [reply.status, reply.body.title, replayed(reply)])).toEqual([
      [200, 'One', null],
      [200, 'Two', null],
    ]);
  });

  it('a replay still needs the caller to be allowed: a removed member gets 403, not the stored answer', async () => {
    const [owner, member] = [await newUser(), await newUser()];
    const board = await newBoard(owner);
    await addMember(owner, board.id, member);
    const key = randomUUID();
    expect((await post(member, `/boards/${board.id}/columns`, { title: 'Mine' }, key)).status).toBe(201);
    expect((await call('DELETE', `/boards/${board.id}/members/${member.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await post(member, `/boards/${board.id}/columns`, { title: 'Mine' }, key), 403);
  });
});

describe('Idempotency-Key on registration (the key belongs to the account; tokens are never kept)', () => {
  const register = (body: Record<string, string>, key?: string) =>
    call('POST', '/auth/register', { body, headers: key === undefined ? {} : { 'idempotency-key': key } });
  const newAccount = () => ({ email: uniqueEmail(), password: `pw-${randomUUID()}`, display_name: 'Ann' });
  const boardsWith = (token: string) => call('GET', '/boards', { token });

  it('a retried registration creates the account once and answers 201 again, with new working tokens', async () => {
    const account = newAccount();
    const key = randomUUID();
    const first = await register(account, key);
    const retry = await register(account, key);
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(replayed(first)).toBeNull();
    expect(replayed(retry)).toBe('true');
    expect(subjectOf(retry.body.token)).toBe(subjectOf(first.body.token));
    expect(retry.body).toMatchObject({ token_type: 'Bearer', refresh_token: expect.any(String) });
    expect((await boardsWith(first.body.token)).status).toBe(200);
    expect((await boardsWith(retry.body.token)).status).toBe(200);
    // The record keeps the status alone: no token, no password, no address.
    const kept = await keptRecord(`account:${keyHash(account.email.toLowerCase())}`, key);
    expect(kept.Item).toMatchObject({ status: 'completed', answer: '{"status":201}' });
    const stored = JSON.stringify(kept.Item);
    for (const secret of [first.body.token, first.body.refresh_token, account.password, account.email]) {
      expect(stored).not.toContain(secret);
    }
    // Without the key, the same retry is the conflict it always was: one account exists.
    expect(expectProblem(await register(account), 409)).toMatchObject({ code: 'conflict' });
  });

  it('the same key with another display name is 422; with another password the retry is refused 401 and the account keeps its own', async () => {
    const account = newAccount();
    const key = randomUUID();
    expect((await register(account, key)).status).toBe(201);
    expect(expectProblem(await register({ ...account, display_name: 'Bob' }, key), 422)).toMatchObject({
      code: 'idempotency_key_reused',
    });
    expectProblem(await register({ ...account, password: `pw-${randomUUID()}` }, key), 401);
    const login = await call('POST', '/auth/login', { body: { email: account.email, password: account.password } });
    expect(login.status).toBe(200);
  });

  it('keys belong to the account: the same key registering two emails makes two accounts', async () => {
    const key = randomUUID();
    const [ann, bob] = [newAccount(), newAccount()];
    const first = await register(ann, key);
    const second = await register(bob, key);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(replayed(second)).toBeNull();
    expect(subjectOf(second.body.token)).not.toBe(subjectOf(first.body.token));
  });

  it('a registration that failed keeps nothing: the key is free for the retry', async () => {
    const taken = newAccount();
    expect((await register(taken)).status).toBe(201);
    const key = randomUUID();
    expectProblem(await register({ ...taken, password: `pw-${randomUUID()}` }, key), 409);
    const again = await register({ ...taken, password: `pw-${randomUUID()}` }, key);
    expect(expectProblem(again, 409)).toMatchObject({ code: 'conflict' });
  });
});
