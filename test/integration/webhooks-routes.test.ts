import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook as Verifier } from 'standardwebhooks';
import type { Webhook } from '../../lib/data/webhooks';
import { call, expectProblem, newUser, type Reply, type TestUser, UUID, unknownId } from '../support/api';
import { closeServers } from '../support/http-servers';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { eventually } from '../support/wait';

/**
 * "Managing webhooks" (docs/reference.md, "Webhooks"): the eight owner routes over HTTP,
 * against a local stack of this file's own, whose WEBHOOK_ALLOW_HOSTS is `localhost` alone (so
 * every spelling of 127.0.0.1 is refused like any other non-public address, and a receiver on this
 * machine is reached as `http://localhost`) and whose WEBHOOK_RETRY_SCHEDULE is empty (one attempt a
 * delivery). Checked: the Webhook shape, the order of checks (400, then 403 for non-members and
 * non-owners, then 404), the URL rules with the tricks attackers use, the limit of 10 under a burst,
 * where the secret appears (create and rotate answers only; at rest only as ciphertext), that a bad
 * input changes nothing, and the races of patch against delete and of two rotations.
 */

const ALLOWED_HOST = 'localhost';
const dataDir = mkdtempSync(join(tmpdir(), 'task-board-webhooks-'));
let stack: RunningStack | undefined;
let url: string;
let table: { client: DynamoDBDocumentClient; name: string };

beforeAll(async () => {
  // A second DynamoDB Local beside the shared stack's: on a machine busy enough that one does not
  // get ready in its time, start again (in a new folder) rather than fail the file.
  for (let attempt = 1; ; attempt++) {
    try {
      stack = await startStackProcess(join(dataDir, String(attempt)), {
        WEBHOOK_ALLOW_HOSTS: ALLOWED_HOST,
        WEBHOOK_RETRY_SCHEDULE: '',
      });
      const env = localEnv(join(dataDir, String(attempt)));
      table = { client: localDocumentClient(env), name: env.TABLE_NAME! };
      break;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
  url = stack!.url;
});

afterAll(async () => {
  table?.client.destroy();
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

// --- helpers -------------------------------------------------------------------------------------

type WebhookView = Webhook & { secret?: string };

const WEBHOOK_FIELDS = [
  'active',
  'board_id',
  'created_at',
  'created_by',
  'description',
  'disabled_reason',
  'events',
  'id',
  'url',
];
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

const as = (user: TestUser | undefined) => ({ token: user?.token, url });
const createHook = (user: TestUser | undefined, boardId: string, body: unknown) =>
  call<WebhookView>('POST', `/boards/${boardId}/webhooks`, { ...as(user), body });
const listHooks = (user: TestUser | undefined, boardId: string) =>
  call<WebhookView[]>('GET', `/boards/${boardId}/webhooks`, as(user));
const getHook = (user: TestUser | undefined, id: string) => call<WebhookView>('GET', `/webhooks/${id}`, as(user));
const patchHook = (user: TestUser | undefined, id: string, body: unknown) =>
  call<WebhookView>('PATCH', `/webhooks/${id}`, { ...as(user), body });
const deleteHook = (user: TestUser | undefined, id: string) => call('DELETE', `/webhooks/${id}`, as(user));
const rotate = (user: TestUser | undefined, id: string) => call<WebhookView>('POST', `/webhooks/${id}/rotate-secret`, as(user));
const ping = (user: TestUser | undefined, id: string) => call('POST', `/webhooks/${id}/ping`, as(user));
const deliveries = (user: TestUser | undefined, id: string, query = '') =>
  call('GET', `/webhooks/${id}/deliveries${query}`, as(user));

function expectStatus(reply: Reply, status: number) {
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status}: ${JSON.stringify(reply.body)}`);
}

async function newBoard(owner: TestUser): Promise<string> {
  const reply = await call('POST', '/boards', { ...as(owner), body: { title: 'Webhooks board' } });
  expectStatus(reply, 201);
  return reply.body.id;
}

async function addMember(owner: TestUser, boardId: string, user: TestUser, role: 'owner' | 'member' = 'member') {
  expectStatus(await call('POST', `/boards/${boardId}/members`, { ...as(owner), body: { email: user.email, role } }), 201);
}

/** POST /boards/{id}/webhooks, which must succeed. */
async function webhook(owner: TestUser, boardId: string, body: Record<string, unknown> = {}): Promise<WebhookView> {
  const reply = await createHook(owner, boardId, { url: 'https://example.com/hooks/task-board', ...body });
  expectStatus(reply, 201);
  return reply.body;
}

/** Every item the webhook's board partition and its own partition hold, for "nothing changed" checks. */
const itemsOf = async (boardId: string, webhookId?: string) => ({
  board: await readPartition(table.client, table.name, `BOARD#${boardId}`),
  webhook: webhookId ? await readPartition(table.client, table.name, `WEBHOOK#${webhookId}`) : [],
});

/** A raw item as text, binary attributes included both as base64 and as UTF-8. */
const rawText = (items: Record<string, unknown>[]) =>
  JSON.stringify(items, (_key, value) =>
    value instanceof Uint8Array ? `${Buffer.from(value).toString('base64')}|${Buffer.from(value).toString('utf8')}` : value,
  );

const boardItem = async (boardId: string) =>
  (await readPartition(table.client, table.name, `BOARD#${boardId}`)).find((item) => item.sk === '#BOARD');

let owner: TestUser;
let member: TestUser;
let coOwner: TestUser;
let stranger: TestUser;

beforeAll(async () => {
  [owner, member, coOwner, stranger] = await Promise.all([newUser(url), newUser(url), newUser(url), newUser(url)]);
});

// --- the Webhook and its secret ------------------------------------------------------------------

describe('create, read, list', () => {
  it('POST answers 201 with the Webhook and a whsec_ secret of 32 random bytes; defaults: all events, no description, active', async () => {
    const boardId = await newBoard(owner);
    const reply = await createHook(owner, boardId, { url: 'https://Example.COM:443/hooks/%7Euser?x=1' });
    expectStatus(reply, 201);
    const created = reply.body;
    expect(Object.keys(created).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort());
    expect(created).toMatchObject({
      id: expect.stringMatching(UUID),
      board_id: boardId,
      // Stored as the URL parser normalises it: the form that was checked.
      url: 'https://example.com/hooks/%7Euser?x=1',
      events: [],
      description: null,
      active: true,
      disabled_reason: null,
      // The owner it speaks for: its creator.
      created_by: owner.id,
    });
    expect(Date.parse(created.created_at)).not.toBeNaN();
    expect(created.secret).toMatch(SECRET);
    expect(Buffer.from(created.secret!.slice('whsec_'.length), 'base64')).toHaveLength(32);

    // Each webhook its own secret.
    const second = await webhook(owner, boardId);
    expect(second.secret).not.toBe(created.secret);
  });

  it('GET, GET list and PATCH never show the secret; the list is oldest first', async () => {
    const boardId = await newBoard(owner);
    const first = await webhook(owner, boardId, { events: ['card.moved', 'card.created'], description: 'first' });
    const second = await webhook(owner, boardId);
    const third = await webhook(owner, boardId, { description: '' });
    const { secret: _secret, ...firstShown } = first;

    const got = await getHook(owner, first.id);
    expectStatus(got, 200);
    expect(got.body).toEqual(firstShown);

    const list = await listHooks(owner, boardId);
    expectStatus(list, 200);
    expect(list.body.map((hook) => hook.id)).toEqual([first.id, second.id, third.id]);
    for (const shown of list.body) expect(Object.keys(shown).sort()).toEqual(WEBHOOK_FIELDS);

    const patched = await patchHook(owner, first.id, { description: 'renamed' });
    expectStatus(patched, 200);
    expect(patched.body).toEqual({ ...firstShown, description: 'renamed' });
    for (const reply of [got, list, patched]) expect(JSON.stringify(reply.body)).not.toContain('whsec_');
  });

  it('the secret is stored only as KMS ciphertext: no raw item holds it, in any encoding', async () => {
    const boardId = await newBoard(owner);
    const created = await webhook(owner, boardId);
    const rotated = await rotate(owner, created.id);
    expectStatus(rotated, 200);
    const { board, webhook: own } = await itemsOf(boardId, created.id);
    const lookup = await readPartition(table.client, table.name, `WEBHOOK#${created.id}`);
    const text = rawText([...board, ...own, ...lookup]);
    expect(text).not.toContain('whsec_');
    for (const secret of [created.secret!, rotated.body.secret!]) {
      expect(text).not.toContain(secret.slice('whsec_'.length));
      expect(text).not.toContain(Buffer.from(secret.slice('whsec_'.length), 'base64').toString('hex'));
    }
    const item = board.find((candidate) => candidate.sk === `WEBHOOK#${created.id}`)!;
    expect(item.secret_enc).toBeInstanceOf(Uint8Array);
    expect(item.previous_secret_enc).toBeInstanceOf(Uint8Array);
    expect(Object.keys(item)).not.toContain('secret');
  });

  it('fields the route does not name are ignored (an id or a secret sent in the body changes nothing)', async () => {
    const boardId = await newBoard(owner);
    const chosenId = unknownId();
    const chosen = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const reply = await createHook(owner, boardId, {
      url: 'https://example.com/x',
      id: chosenId,
      secret: chosen,
      active: false,
      disabled_reason: 'failing',
      board_id: unknownId(),
    });
    expectStatus(reply, 201);
    expect(reply.body).toMatchObject({ board_id: boardId, active: true, disabled_reason: null });
    expect(reply.body.id).not.toBe(chosenId);
    expect(reply.body.secret).not.toBe(chosen);
  });
});

// --- the URL rules -------------------------------------------------------------------------------

describe('the URL rules: an absolute https URL of at most 2,048 characters, never a non-public IP literal', () => {
  const longUrl = (length: number) => {
    const head = 'https://example.com/';
    return head + 'a'.repeat(length - head.length);
  };
  const refused: [string, string][] = [
    ['127.0.0.1 in decimal', 'https://2130706433/hook'],
    ['127.0.0.1 in octal', 'https://0177.0.0.1/hook'],
    ['127.0.0.1 in hex', 'https://0x7f.0.0.1/hook'],
    ['127.0.0.1 shortened', 'https://127.1/hook'],
    ['127.0.0.1 itself', 'https://127.0.0.1/hook'],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook'],
    ['the instance metadata address', 'https://169.254.169.254/latest/meta-data/'],
    ['0.0.0.0', 'https://0.0.0.0/hook'],
    ['IPv6 loopback', 'https://[::1]/hook'],
    ['IPv6 unique-local', 'https://[fd00::1]/hook'],
    ['10.0.0.1 in decimal', 'https://167772161/hook'],
    ['private 192.168/16', 'https://192.168.1.20/hook'],
    ['IPv6 metadata (unique-local)', 'https://[fd00:ec2::254]/'],
    ['plain http to a host not allowed', 'http://example.com/hook'],
    ['plain http to 127.0.0.1, not allowed here', 'http://127.0.0.1:8080/hook'],
    ['2,049 characters', longUrl(2049)],
    ['another scheme', 'ftp://example.com/hook'],
    ['a relative URL', '/hooks/task-board'],
    ['no scheme', 'example.com/hook'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['an empty string', ''],
    // Credentials before the host would be kept and shown in clear (and the host is not what it seems).
    ['a user name and password', 'https://user:pass@example.com/hook'],
    ['a user name alone', 'https://deploy-bot@example.com/hook'],
    ['a password alone', 'https://:s3cret@example.com/hook'],
    ['a trusted-looking name before the real host', 'https://example.com@evil.example/hook'],
    ['credentials on an allowed host', `http://admin:admin@${ALLOWED_HOST}:9/hook`],
  ];

  it.each(refused)('%s → 400 naming the rule, never the value, and nothing is created', async (_name, bad) => {
    const boardId = await newBoard(owner);
    const before = await itemsOf(boardId);
    const reply = await createHook(owner, boardId, { url: bad });
    const problem = expectProblem(reply, 400);
    expect(problem.code).toBe('bad_request');
    const errors = (reply.body as unknown as { errors: { path: string; message: string }[] }).errors;
    expect(errors.map((error) => error.path)).toEqual(['body.url']);
    expect(errors[0]!.message).toMatch(
      /https URL|at most 2048 characters|non-public address|must be a string|user name or password/,
    );
    if (bad.length > 0) expect(JSON.stringify(reply.body)).not.toContain(bad);
    const host = new URL(bad, 'https://x.invalid').hostname;
    if (host && host !== 'x.invalid') expect(JSON.stringify(reply.body)).not.toContain(host);
    expect(await itemsOf(boardId)).toEqual(before);
  });

  it('the same rules hold on PATCH: a refused URL leaves the webhook as it was', async () => {
    const boardId = await newBoard(owner);
    const hook = await webhook(owner, boardId);
    const before = await itemsOf(boardId, hook.id);
    for (const [, bad] of refused) {
      const reply = await patchHook(owner, hook.id, { url: bad, description: 'never stored' });
      expectProblem(reply, 400);
    }
    expect(await itemsOf(boardId, hook.id)).toEqual(before);
  });

  it.each([
    ['exactly 2,048 characters', longUrl(2048)],
    ['a public IPv4 literal', 'https://8.8.8.8/hook'],
    ['a public IPv6 literal', 'https://[2001:4860:4860::8888]/hook'],
    ['a host name (resolved at each attempt, not now)', 'https://hooks.example.org:8443/task-board?token=abc'],
    ['plain http to an allowed host', `http://${ALLOWED_HOST}:9/hook`],
  ])('%s is accepted', async (_name, good) => {
    const boardId = await newBoard(owner);
    const reply = await createHook(owner, boardId, { url: good });
    expectStatus(reply, 201);
    expect(reply.body.url).toBe(new URL(good).href);
  });
});

// --- the other fields ----------------------------------------------------------------------------

describe('events, description, active', () => {
  it.each([
    ['an unknown event type', { events: ['card.exploded'] }, 'body.events.0'],
    ['access.revoked (never delivered)', { events: ['access.revoked'] }, 'body.events.0'],
    ['webhook.ping (always delivered)', { events: ['webhook.ping'] }, 'body.events.0'],
    ['a type named twice', { events: ['card.moved', 'card.moved'] }, 'body.events'],
    ['events not a list', { events: 'card.moved' }, 'body.events'],
    ['a description of 257 characters', { description: 'd'.repeat(257) }, 'body.description'],
    ['a description that is not text', { description: 42 }, 'body.description'],
  ])('%s → 400 on its field, nothing created', async (_name, extra, path) => {
    const boardId = await newBoard(owner);
    const before = await itemsOf(boardId);
    const reply = await createHook(owner, boardId, { url: 'https://example.com/hook', ...extra });
    expectProblem(reply, 400);
    expect((reply.body as unknown as { errors: { path: string }[] }).errors.map((error) => error.path)).toContain(path);
    expect(await itemsOf(boardId)).toEqual(before);
  });

  it('a description of 256 characters and every board event type are accepted', async () => {
    const boardId = await newBoard(owner);
    const all = [
      'card.created',
      'card.updated',
      'card.moved',
      'card.deleted',
      'column.created',
      'column.updated',
      'column.moved',
      'column.deleted',
      'board.updated',
      'board.deleted',
      'member.added',
      'member.updated',
      'member.removed',
      'label.created',
      'label.updated',
      'label.deleted',
    ];
    const hook = await webhook(owner, boardId, { events: all, description: '€'.repeat(256) });
    expect(hook.events).toEqual(all);
    expect(hook.description).toBe('€'.repeat(256));
  });

  it('PATCH: null or omitted leaves a field as it is; [] selects every event; each field changes alone', async () => {
    const boardId = await newBoard(owner);
    const { secret: _secret, ...hook } = await webhook(owner, boardId, { events: ['card.moved'], description: 'd' });
    const unchanged = await patchHook(owner, hook.id, { url: null, events: null, description: null, active: null });
    expectStatus(unchanged, 200);
    expect(unchanged.body).toEqual(hook);
    expectStatus(await patchHook(owner, hook.id, {}), 200);

    const changed = await patchHook(owner, hook.id, { url: 'https://example.net/new', events: [], active: false });
    expectStatus(changed, 200);
    expect(changed.body).toEqual({ ...hook, url: 'https://example.net/new', events: [], active: false });
    expect((await getHook(owner, hook.id)).body).toEqual(changed.body);
  });

  it('PATCH refuses a non-boolean active and bad events with 400, changing nothing', async () => {
    const boardId = await newBoard(owner);
    const hook = await webhook(owner, boardId);
    const before = await itemsOf(boardId, hook.id);
    for (const body of [{ active: 'yes' }, { active: 1 }, { events: ['nope'] }, { description: 'x'.repeat(257) }, { url: 7 }]) {
      expectProblem(await patchHook(owner, hook.id, body), 400);
    }
    for (const raw of ['[]', '"text"', 'not json']) {
      const reply = await call('PATCH', `/webhooks/${hook.id}`, {
        ...as(owner),
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(reply, 400);
    }
    expect(await itemsOf(boardId, hook.id)).toEqual(before);
  });

  it('PATCH active: true switches on a webhook the service switched off, clearing its reason and failure counts', async () => {
    const boardId = await newBoard(owner);
    const hook = await webhook(owner, boardId);
    // As the delivery worker leaves a failing webhook (webhooks.md: 50 in a row or 5 days).
    await table.client.send(
      new UpdateCommand({
        TableName: table.name,
        Key: { pk: `BOARD#${boardId}`, sk: `WEBHOOK#${hook.id}` },
        UpdateExpression: 'SET active = :off, disabled_reason = :failing, failing_since = :since, failed_in_row = :fifty',
        ExpressionAttributeValues: { ':off': false, ':failing': 'failing', ':since': '2026-01-01T00:00:00.000Z', ':fifty': 50 },
      }),
    );
    expect((await getHook(owner, hook.id)).body).toMatchObject({ active: false, disabled_reason: 'failing' });

    // Switching it off again keeps the service's reason; switching it on clears everything.
    expect((await patchHook(owner, hook.id, { active: false })).body).toMatchObject({
      active: false,
      disabled_reason: 'failing',
    });
    const on = await patchHook(owner, hook.id, { active: true });
    expectStatus(on, 200);
    expect(on.body).toMatchObject({ active: true, disabled_reason: null });
    const item = (await itemsOf(boardId)).board.find((candidate) => candidate.sk === `WEBHOOK#${hook.id}`)!;
    expect(item).not.toHaveProperty('failing_since');
    expect(item).not.toHaveProperty('failed_in_row');
  });
});

// --- the limit -----------------------------------------------------------------------------------

describe('at most 10 webhooks a board', () => {
  it('an eleventh is 409 naming the limit, with no secret in the problem; a delete makes room again', async () => {
    const boardId = await newBoard(owner);
    const made: WebhookView[] = [];
    for (let i = 0; i < 10; i++) made.push(await webhook(owner, boardId, { description: `hook ${i}` }));
    const before = await itemsOf(boardId);
    const eleventh = await createHook(owner, boardId, { url: 'https://example.com/11' });
    const problem = expectProblem(eleventh, 409);
    expect(problem.code).toBe('limit_reached');
    expect(problem.detail).toMatch(/10/);
    expect(JSON.stringify(eleventh.body)).not.toContain('whsec_');
    expect(await itemsOf(boardId)).toEqual(before);

    expectStatus(await deleteHook(owner, made[3]!.id), 204);
    expectStatus(await createHook(owner, boardId, { url: 'https://example.com/11' }), 201);
    expect((await boardItem(boardId))!.webhook_count).toBe(10);
  });

  it('a burst of 14 concurrent creates: exactly 10 succeed, the rest are 409, and the count is 10', async () => {
    const boardId = await newBoard(owner);
    // As a client would: a 503 (storage busy with the burst's own transactions) is sent again.
    const untilAnswered = async (i: number) => {
      for (let attempt = 1; ; attempt++) {
        const reply = await createHook(owner, boardId, { url: `https://example.com/burst/${i}` });
        if (reply.status !== 503 || attempt === 10) return reply;
      }
    };
    const replies = await Promise.all(Array.from({ length: 14 }, (_, i) => untilAnswered(i)));
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([...Array(10).fill(201), ...Array(4).fill(409)]);
    const list = await listHooks(owner, boardId);
    expect(list.body).toHaveLength(10);
    expect(new Set(list.body.map((hook) => hook.id))).toEqual(
      new Set(replies.filter((reply) => reply.status === 201).map((reply) => reply.body.id)),
    );
    expect((await boardItem(boardId))!.webhook_count).toBe(10);
  });
});

// --- who may -------------------------------------------------------------------------------------

describe('owners only, in the order of checks', () => {
  let boardId: string;
  let hook: WebhookView;
  let otherBoard: string;
  let otherHook: WebhookView;

  beforeAll(async () => {
    boardId = await newBoard(owner);
    await Promise.all([addMember(owner, boardId, member), addMember(owner, boardId, coOwner, 'owner')]);
    // Selecting only board.deleted (never sent here): no delivery's outcome changes the partition compared below.
    hook = await webhook(owner, boardId, { events: ['board.deleted'] });
    otherBoard = await newBoard(stranger);
    otherHook = await webhook(stranger, otherBoard);
  });

  const webhookRoutes = (id: string) => [
    () => getHook(callerOf.current, id),
    () => patchHook(callerOf.current, id, { description: 'by an intruder' }),
    () => deleteHook(callerOf.current, id),
    () => rotate(callerOf.current, id),
    () => ping(callerOf.current, id),
    () => deliveries(callerOf.current, id),
  ];
  const callerOf: { current?: TestUser } = {};

  it('a member who is not an owner gets 403 on all eight routes, and nothing changes', async () => {
    callerOf.current = member;
    const before = await itemsOf(boardId, hook.id);
    const replies = [
      await createHook(member, boardId, { url: 'https://example.com/by-member' }),
      await listHooks(member, boardId),
      ...(await Promise.all(webhookRoutes(hook.id).map((send) => send()))),
    ];
    for (const reply of replies) {
      expectProblem(reply, 403);
      expect(JSON.stringify(reply.body)).not.toContain('whsec_');
    }
    expect(await itemsOf(boardId, hook.id)).toEqual(before);
  });

  it('a non-member gets 403 on all eight routes (another board of theirs included), never 404, and nothing changes', async () => {
    const outsider = await newUser(url);
    callerOf.current = outsider;
    const before = await itemsOf(boardId, hook.id);
    const replies = [
      await createHook(outsider, boardId, { url: 'https://example.com/by-outsider' }),
      await listHooks(outsider, boardId),
      ...(await Promise.all(webhookRoutes(hook.id).map((send) => send()))),
    ];
    for (const reply of replies) expectProblem(reply, 403);
    // An owner of board A addressing board B's webhook: not theirs, 403 as for the tree.
    callerOf.current = owner;
    for (const reply of await Promise.all(webhookRoutes(otherHook.id).map((send) => send()))) expectProblem(reply, 403);
    expect(await itemsOf(boardId, hook.id)).toEqual(before);
    expectStatus(await getHook(stranger, otherHook.id), 200);
  });

  it('a non-member asking for a board id no board has gets 403; an owner of nothing either', async () => {
    expectProblem(await createHook(owner, unknownId(), { url: 'https://example.com/x' }), 403);
    expectProblem(await listHooks(owner, unknownId()), 403);
  });

  it('a malformed body is 400 before anything else, even for a non-member', async () => {
    expectProblem(await createHook(stranger, boardId, { url: 'http://example.com/' }), 400);
    expectProblem(await patchHook(stranger, hook.id, { active: 'no' }), 400);
    expectProblem(await patchHook(owner, 'not-a-uuid', {}), 400);
  });

  it('an id that no webhook has is 404 on every /webhooks/{id} route', async () => {
    callerOf.current = owner;
    for (const reply of await Promise.all(webhookRoutes(unknownId()).map((send) => send()))) {
      expect(expectProblem(reply, 404).code).toBe('not_found');
    }
  });

  it('a co-owner manages the webhooks as the creator does', async () => {
    const made = await webhook(coOwner, boardId, { description: 'by the co-owner', events: ['board.deleted'] });
    expectStatus(await getHook(owner, made.id), 200);
    expectStatus(await patchHook(coOwner, hook.id, { description: 'edited by the co-owner' }), 200);
    expectStatus(await deleteHook(owner, made.id), 204);
  });
});

describe('deleting', () => {
  it('DELETE answers 204; afterwards every route says 404, the item and its lookup are gone and the count drops', async () => {
    const boardId = await newBoard(owner);
    const hook = await webhook(owner, boardId);
    expect((await boardItem(boardId))!.webhook_count).toBe(1);
    expectStatus(await deleteHook(owner, hook.id), 204);
    for (const reply of [
      await getHook(owner, hook.id),
      await patchHook(owner, hook.id, { active: true }),
      await deleteHook(owner, hook.id),
      await rotate(owner, hook.id),
      await ping(owner, hook.id),
      await deliveries(owner, hook.id),
    ]) {
      expectProblem(reply, 404);
    }
    const { board, webhook: own } = await itemsOf(boardId, hook.id);
    expect(board.filter((item) => String(item.sk).startsWith('WEBHOOK#'))).toEqual([]);
    expect(own.filter((item) => item.sk === '#LOOKUP')).toEqual([]);
    expect((await boardItem(boardId))!.webhook_count).toBe(0);
    expect((await listHooks(owner, boardId)).body).toEqual([]);
  });

  it("a deleted board's webhooks are 404 at once on every route", async () => {
    const boardId = await newBoard(owner);
    const hook = await webhook(owner, boardId);
    expectStatus(await call('DELETE', `/boards/${boardId}`, as(owner)), 204);
    for (const reply of [
      await getHook(owner, hook.id),
      await patchHook(owner, hook.id, { description: 'x' }),
      await deleteHook(owner, hook.id),
      await rotate(owner, hook.id),
      await ping(owner, hook.id),
      await deliveries(owner, hook.id),
    ]) {
      expectProblem(reply, 404);
    }
  });
});

// --- races ---------------------------------------------------------------------------------------

describe('races', () => {
  it('PATCH racing DELETE never brings a deleted webhook back (5 rounds)', async () => {
    const boardId = await newBoard(owner);
    for (let round = 0; round < 5; round++) {
      const hook = await webhook(owner, boardId);
      const [patched, deleted, patchedAgain] = await Promise.all([
        patchHook(owner, hook.id, { description: `round ${round}`, active: false }),
        deleteHook(owner, hook.id),
        patchHook(owner, hook.id, { url: 'https://example.com/late' }),
      ]);
      expectStatus(deleted, 204);
      for (const reply of [patched, patchedAgain]) expect([200, 404]).toContain(reply.status);
      expectProblem(await getHook(owner, hook.id), 404);
      const { board, webhook: own } = await itemsOf(boardId, hook.id);
      expect(board.filter((item) => item.sk === `WEBHOOK#${hook.id}`)).toEqual([]);
      expect(own.filter((item) => item.sk === '#LOOKUP')).toEqual([]);
    }
    expect((await boardItem(boardId))!.webhook_count).toBe(0);
  });

  it('two DELETEs at once: one 204, one 404, the count drops by one', async () => {
    const boardId = await newBoard(owner);
    const keep = await webhook(owner, boardId);
    const hook = await webhook(owner, boardId);
    const statuses = (await Promise.all([deleteHook(owner, hook.id), deleteHook(owner, hook.id)])).map((reply) => reply.status);
    expect(statuses.sort()).toEqual([204, 404]);
    expect((await boardItem(boardId))!.webhook_count).toBe(1);
    expectStatus(await getHook(owner, keep.id), 200);
  });
});

// --- rotation and ping, with a real receiver -----------------------------------------------------

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

describe('rotate-secret and ping, delivered to a receiver on this machine', () => {
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(204).end();
      });
    });
    // `localhost` may resolve to either family first: listen on both.
    await new Promise<void>((resolve) => receiver.listen(0, '::', resolve));
    receiverUrl = `http://${ALLOWED_HOST}:${(receiver.address() as AddressInfo).port}/hook`;
  });

  afterAll(async () => {
    await closeServers([receiver]);
  });

  /** The receiver's first request carrying this webhook's ping, once it has come. */
  const pingFor = async (webhookId: string, after = 0): Promise<Received> => {
    let found: Received | undefined;
    await eventually(async () => {
      found = received.find((request) => {
        const body = JSON.parse(request.body) as { type: string; webhook_id: string };
        return (
          body.type === 'webhook.ping' && body.webhook_id === webhookId && Number(request.headers['webhook-timestamp']) >= after
        );
      });
      expect(found).toBeDefined();
    }, 120_000);
    received.splice(received.indexOf(found!), 1);
    return found!;
  };

  const verify = (secret: string, request: Received) =>
    new Verifier(secret).verify(request.body, request.headers as Record<string, string>) as Record<string, unknown>;

  it('ping answers 202 and delivers a webhook.ping (no seq) signed with the secret, even while the webhook is off', async () => {
    const boardId = await newBoard(owner);
    const hook = await webhook(owner, boardId, { url: receiverUrl, events: ['card.moved'] });
    expectStatus(await patchHook(owner, hook.id, { active: false }), 200);

    const reply = await ping(owner, hook.id);
    expectStatus(reply, 202);
    const request = await pingFor(hook.id);
    const event = verify(hook.secret!, request);
    expect(Object.keys(event).sort()).toEqual(['board_id', 'event_id', 'occurred_at', 'type', 'webhook_id']);
    expect(event).toMatchObject({
      type: 'webhook.ping',
      board_id: boardId,
      webhook_id: hook.id,
      event_id: expect.stringMatching(UUID),
    });

    // The deliveries log shows it, newest first, without the body or any secret.
    await eventually(async () => {
      const log = await deliveries(owner, hook.id);
      expectStatus(log, 200);
      expect(log.body).toEqual([
        expect.objectContaining({
          id: request.headers['webhook-id'],
          event_id: event.event_id,
          type: 'webhook.ping',
          seq: null,
          status: 'delivered',
        }),
      ]);
      expect(JSON.stringify(log.body)).not.toContain('whsec_');
    });
  });

  it('after a rotation both secrets sign for 24 hours; of two racing rotations neither secret is lost', async () => {
    const boardId = await newBoard(owner);
    const hook = await webhook(owner, boardId, { url: receiverUrl });
    const rotated = await rotate(owner, hook.id);
    expectStatus(rotated, 200);
    expect(Object.keys(rotated.body).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort());
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(hook.secret);

    const since = Math.floor(Date.now() / 1000);
    expectStatus(await ping(owner, hook.id), 202);
    const request = await pingFor(hook.id, since - 1);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verify(rotated.body.secret!, request);
    verify(hook.secret!, request);

    // Two at once: the second starts again on the first's result, so the two answers' secrets are
    // the two that sign (the creation's, two rotations back, no longer does).
    const [a, b] = await Promise.all([rotate(owner, hook.id), rotate(owner, hook.id)]);
    expectStatus(a, 200);
    expectStatus(b, 200);
    expect(a.body.secret).not.toBe(b.body.secret);
    const later = Math.floor(Date.now() / 1000);
    expectStatus(await ping(owner, hook.id), 202);
    const last = await pingFor(hook.id, later - 1);
    verify(a.body.secret!, last);
    verify(b.body.secret!, last);
    expect(() => verify(hook.secret!, last)).toThrow();
  });

  it('deliveries: limit is 1 to 100 (default 20); anything else is 400', async () => {
    const boardId = await newBoard(owner);
    const hook = await webhook(owner, boardId, { url: receiverUrl });
    for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?limit=-1', '?limit=1.5']) {
      expectProblem(await deliveries(owner, hook.id, query), 400);
    }
    expectStatus(await ping(owner, hook.id), 202);
    expectStatus(await ping(owner, hook.id), 202);
    await pingFor(hook.id);
    await pingFor(hook.id);
    await eventually(async () => expect((await deliveries(owner, hook.id)).body).toHaveLength(2));
    const one = await deliveries(owner, hook.id, '?limit=1');
    expectStatus(one, 200);
    expect(one.body).toHaveLength(1);
    expectStatus(await deliveries(owner, hook.id, '?limit=100'), 200);
  });
});
