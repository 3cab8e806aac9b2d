import { mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Webhook } from 'standardwebhooks';
import { call, newBoard, newColumn, newUser, type TestUser } from '../support/api';
import { closeServers } from '../support/http-servers';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { localClientConfig, localDocumentClient, localEnv, readPartition, runStorageCodeOn } from '../support/local-table';
import { closeAllSockets, connect, type Frame } from '../support/sockets';
import { eventually } from '../support/wait';

/**
 * Webhook deliveries (docs/reference.md "Webhooks") over the real local stack: REST
 * changes, the table's stream, the fanout, the local SQS stand-in, the delivery worker, and real
 * HTTP receivers on 127.0.0.1, with the real resolver. This file starts a stack of its own with a
 * short retry schedule ("1,1": three attempts a second apart) and only 127.0.0.1 allowed, so that
 * `localhost` (127.0.0.1 through /etc/hosts) is a name resolving to a private address.
 * Signatures are checked with the published `standardwebhooks` verifier. Nothing asserts how long
 * anything took: waits are for arrivals (hang guards), and the slow-endpoint case asserts the order
 * of arrivals only.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'task-board-webhooks-'));
let stack: RunningStack | undefined;
let url: string;

beforeAll(async () => {
  stack = await startStackProcess(dataDir, { WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '1,1' });
  url = stack.url;
});

const servers: Server[] = [];
afterAll(async () => {
  await closeAllSockets();
  await closeServers(servers);
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

const WAIT_MS = 120_000;

interface Received {
  headers: Record<string, string>;
  body: string;
  json: Record<string, unknown>;
  path: string;
  /** When the connection closed, in arrival order across every receiver (or undefined while open). */
  closedAs?: number;
  /** Its arrival among every request of every receiver. */
  arrival: number;
}
let arrivals = 0;
let closes = 0;

type Answer = (req: IncomingMessage, res: ServerResponse, got: Received) => void;

/** A real HTTP receiver on 127.0.0.1; `answer` decides what each request gets (changeable). */
async function receiver(answer: Answer = (_req, res) => res.writeHead(204).end()) {
  const received: Received[] = [];
  const state = { answer };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const got: Received = {
        headers: req.headers as Record<string, string>,
        body,
        json: JSON.parse(body),
        path: req.url ?? '',
        arrival: ++arrivals,
      };
      received.push(got);
      res.on('close', () => {
        got.closedAs = ++closes;
      });
      state.answer(req, res, got);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/in`,
    port,
    received,
    state,
    /** The requests for one event (every attempt of its delivery). */
    of: (eventId: string) => received.filter((r) => r.json.event_id === eventId),
  };
}

async function createWebhook(owner: TestUser, boardId: string, body: Record<string, unknown>) {
  const reply = await call('POST', `/boards/${boardId}/webhooks`, { token: owner.token, body, url });
  if (reply.status !== 201) throw new Error(`create webhook failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as { id: string; secret: string; active: boolean; events: string[] };
}

const deliveries = async (owner: TestUser, webhookId: string, limit?: number) => {
  const reply = await call('GET', `/webhooks/${webhookId}/deliveries${limit ? `?limit=${limit}` : ''}`, {
    token: owner.token,
    url,
  });
  expect(reply.status).toBe(200);
  return reply.body as Record<string, any>[];
};

const verify = (secret: string, got: Received) => new Webhook(secret).verify(got.body, got.headers);

const ok = async (reply: Promise<{ status: number; body: any }>, status = [200, 201, 204]) => {
  const answer = await reply;
  if (!status.includes(answer.status)) throw new Error(`unexpected ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
};

it('delivers every kind of board event with the JSON a watching socket receives (seq included), signed', async () => {
  const owner = await newUser(url);
  const other = await newUser(url);
  const board = await newBoard(owner, 'Hooked', url);
  const hook = await receiver();
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  const socket = await connect(owner, 'owner', url);
  await socket.watch(board.id);

  // Every kind a board has but board.deleted (its own test below).
  const todo = await newColumn(owner, board.id, 'Todo', url);
  const done = await newColumn(owner, board.id, 'Done', url);
  await ok(call('PATCH', `/boards/${board.id}`, { token: owner.token, body: { title: 'Hooked!' }, url }));
  await ok(call('PATCH', `/columns/${done.id}`, { token: owner.token, body: { title: 'Shipped' }, url }));
  await ok(call('PATCH', `/columns/${done.id}/move`, { token: owner.token, body: { after_id: todo.id }, url }));
  const card = await ok(call('POST', `/columns/${todo.id}/cards`, { token: owner.token, body: { title: 'Über ✓ 😀' }, url }));
  await ok(call('PATCH', `/cards/${card.id}`, { token: owner.token, body: { description: 'more' }, url }));
  await ok(call('PATCH', `/cards/${card.id}/move`, { token: owner.token, body: { target_column_id: done.id }, url }));
  const label = await ok(
    call('POST', `/boards/${board.id}/labels`, { token: owner.token, body: { name: 'Bug', color: '#D73A4A' }, url }),
  );
  await ok(call('PATCH', `/labels/${label.id}`, { token: owner.token, body: { name: 'Defect' }, url }));
  await ok(call('PUT', `/cards/${card.id}/labels/${label.id}`, { token: owner.token, url }));
  await ok(call('DELETE', `/labels/${label.id}`, { token: owner.token, url }));
  await ok(call('DELETE', `/cards/${card.id}`, { token: owner.token, url }));
  await ok(call('DELETE', `/columns/${todo.id}`, { token: owner.token, url }));
  await ok(call('POST', `/boards/${board.id}/members`, { token: owner.token, body: { email: other.email }, url }));
  await ok(call('PATCH', `/boards/${board.id}/members/${other.id}`, { token: owner.token, body: { role: 'owner' }, url }));
  await ok(call('DELETE', `/boards/${board.id}/members/${other.id}`, { token: owner.token, url }));

  const last = await socket.waitFor((f) => f.type === 'member.removed', 'member.removed', WAIT_MS);
  // Board events (watch.ack carries a seq too, but no event_id).
  const frames = socket.received.filter(
    (f: Frame) => typeof f.event_id === 'string' && typeof f.seq === 'number' && (f.seq as number) <= (last.seq as number),
  );
  await eventually(async () => expect(hook.received.length).toBeGreaterThanOrEqual(frames.length), WAIT_MS, 100);

  const kinds = new Set(frames.map((f) => f.type));
  for (const kind of [
    'column.created',
    'board.updated',
    'column.updated',
    'column.moved',
    'card.created',
    'card.updated',
    'card.moved',
    'label.created',
    'label.updated',
    'label.deleted',
    'card.deleted',
    'column.deleted',
    'member.added',
    'member.updated',
    'member.removed',
  ])
    expect(kinds).toContain(kind);
  const bySeq = new Map(hook.received.map((got) => [got.json.seq, got]));
  for (const frame of frames) {
    const got = bySeq.get(frame.seq);
    expect(got?.json).toEqual(frame);
    // The exact bytes signed are the bytes sent: the published verifier accepts them.
    expect(verify(webhook.secret, got!)).toEqual(frame);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(got!.path).toBe('/hooks/in');
  }
  // One delivery per event: distinct webhook-ids, no repeats.
  expect(new Set(hook.received.map((got) => got.headers['webhook-id'])).size).toBe(hook.received.length);
});

it("delivers a batch's events one by one, each its own signed delivery, as the log lists them", async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Batched', url);
  const column = await newColumn(owner, board.id, 'Todo', url);
  const hook = await receiver();
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  const body = {
    operations: Array.from({ length: 25 }, (_, i) => ({ op: 'card.create', column_id: column.id, title: `card ${i}` })),
  };
  await ok(call('POST', `/boards/${board.id}/batch`, { token: owner.token, body, url }));
  await eventually(async () => expect(hook.received.length).toBeGreaterThanOrEqual(25), WAIT_MS, 100);
  const logged = await ok(call('GET', `/boards/${board.id}/events?after=0&limit=100`, { token: owner.token, url }));
  const created = (logged.events as { type: string }[]).filter((event) => event.type === 'card.created');
  expect(created).toHaveLength(25);
  // One delivery per event (retries aside: the receiver answered every one with 204).
  const delivered = hook.received.map((got) => {
    verify(webhook.secret, got);
    return got.json;
  });
  expect([...delivered].sort((a, b) => (a.seq as number) - (b.seq as number))).toEqual(created);
});
it('retries a failing endpoint with the same webhook-id and a new timestamp, then fails after n + 1 attempts', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Failing', url);
  const hook = await receiver((_req, res) => res.writeHead(500).end('down'));
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  const column = await newColumn(owner, board.id, 'One', url);

  await eventually(async () => {
    const [delivery] = await deliveries(owner, webhook.id);
    expect(delivery).toMatchObject({ status: 'failed' });
  }, WAIT_MS);
  const attempts = hook.received;
  expect(attempts).toHaveLength(3);
  expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
  const stamps = attempts.map((a) => Number(a.headers['webhook-timestamp']));
  expect(stamps[1]).toBeGreaterThan(stamps[0]!);
  expect(stamps[2]).toBeGreaterThan(stamps[1]!);
  for (const attempt of attempts) {
    expect(attempt.json).toMatchObject({ type: 'column.created', column: expect.objectContaining({ id: column.id }) });
    expect(attempt.body).toBe(attempts[0]!.body);
  }
  const [delivery] = await deliveries(owner, webhook.id);
  expect(delivery).toEqual({
    id: attempts[0]!.headers['webhook-id'],
    event_id: attempts[0]!.json.event_id,
    type: 'column.created',
    seq: attempts[0]!.json.seq,
    status: 'failed',
    attempts: 3,
    last_attempt_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    last_status_code: 500,
    last_error: 'http_500',
    next_attempt_at: null,
  });
});

it('counts a redirect as a failure and never requests its Location', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Redirected', url);
  const elsewhere = await receiver();
  const hook = await receiver((_req, res) => res.writeHead(302, { location: elsewhere.url }).end());
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  await newColumn(owner, board.id, 'One', url);
  await eventually(async () => {
    expect((await deliveries(owner, webhook.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 3,
      last_status_code: 302,
      last_error: 'http_302',
    });
  }, WAIT_MS);
  expect(hook.received).toHaveLength(3);
  expect(elsewhere.received).toHaveLength(0);
});

it('delivers only the selected event types, and nothing but ping to a webhook switched off', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Selective', url);
  const all = await receiver();
  const picky = await receiver();
  const off = await receiver();
  const allHook = await createWebhook(owner, board.id, { url: all.url });
  const pickyHook = await createWebhook(owner, board.id, { url: picky.url, events: ['card.created'] });
  const offHook = await createWebhook(owner, board.id, { url: off.url });
  const patched = await call('PATCH', `/webhooks/${offHook.id}`, { token: owner.token, body: { active: false }, url });
  expect(patched.body).toMatchObject({ active: false });

  const column = await newColumn(owner, board.id, 'One', url);
  const card = await ok(call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: 'A' }, url }));
  await ok(call('PATCH', `/cards/${card.id}`, { token: owner.token, body: { title: 'B' }, url }));

  // The fanout schedules every webhook of an event at once: once the all-events webhook has the
  // last event, the others' deliveries of every event exist (or never will).
  await eventually(async () => expect(all.received.map((r) => r.json.type)).toContain('card.updated'), WAIT_MS);
  await eventually(async () => expect(picky.received).toHaveLength(1), WAIT_MS);
  expect(picky.received[0]!.json).toMatchObject({ type: 'card.created', card: expect.objectContaining({ id: card.id }) });
  expect((await deliveries(owner, pickyHook.id)).map((d) => d.type)).toEqual(['card.created']);
  expect(await deliveries(owner, offHook.id)).toEqual([]);
  expect(off.received).toHaveLength(0);
  expect(allHook.id).toBeDefined();

  // Ping reaches it all the same: its own shape, no seq, signed.
  expect((await call('POST', `/webhooks/${offHook.id}/ping`, { token: owner.token, url })).status).toBe(202);
  await eventually(async () => expect(off.received).toHaveLength(1), WAIT_MS);
  const ping = off.received[0]!;
  expect(Object.keys(ping.json).sort()).toEqual(['board_id', 'event_id', 'occurred_at', 'type', 'webhook_id']);
  expect(ping.json).toMatchObject({ type: 'webhook.ping', board_id: board.id, webhook_id: offHook.id });
  expect(verify(offHook.secret, ping)).toEqual(ping.json);
  await eventually(async () => {
    expect(await deliveries(owner, offHook.id)).toEqual([
      expect.objectContaining({ type: 'webhook.ping', seq: null, status: 'delivered', attempts: 1, last_status_code: 204 }),
    ]);
  }, WAIT_MS);
});

it('a receiver that never answers delays neither another webhook nor the sockets', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Slow and fast', url);
  const stuck = await receiver(() => {
    /* never answers: the worker's 10 s limit ends each attempt */
  });
  const fast = await receiver();
  await createWebhook(owner, board.id, { url: stuck.url });
  await createWebhook(owner, board.id, { url: fast.url });
  const socket = await connect(owner, 'watcher', url);
  await socket.watch(board.id);

  const column = await newColumn(owner, board.id, 'One', url);
  await eventually(async () => expect(stuck.received).toHaveLength(1), WAIT_MS);
  const cards: string[] = [];
  for (const title of ['a', 'b', 'c']) {
    const card = await ok(call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title }, url }));
    cards.push(card.id);
  }
  for (const id of cards)
    await socket.waitFor((f) => f.type === 'card.created' && (f.card as { id: string }).id === id, 'card.created', WAIT_MS);
  await eventually(
    async () =>
      expect(
        fast.received
          .filter((r) => r.json.type === 'card.created')
          .map((r) => (r.json.card as { id: string }).id)
          .sort(),
      ).toEqual([...cards].sort()),
    WAIT_MS,
  );
  // Everything reached the fast receiver and the socket while the stuck receiver's first request
  // (made before those changes) was still open: nothing waited for it.
  const first = stuck.received[0]!;
  const lastFast = fast.received.filter((r) => r.json.type === 'card.created').at(-1)!;
  expect(first.arrival).toBeLessThan(lastFast.arrival);
  expect(first.closedAs).toBeUndefined();
});

it('refuses a host name that resolves to a private address (the real resolver): forbidden_address, nothing connected', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Internal', url);
  const hook = await receiver();
  // localhost is 127.0.0.1 in /etc/hosts; only the literal 127.0.0.1 is allowed on this stack.
  const webhook = await createWebhook(owner, board.id, { url: `https://localhost:${hook.port}/hooks/in` });
  await newColumn(owner, board.id, 'One', url);
  await eventually(async () => {
    expect((await deliveries(owner, webhook.id))[0]).toMatchObject({
      status: 'failed',
      attempts: 3,
      last_status_code: null,
      last_error: 'forbidden_address',
    });
  }, WAIT_MS);
  expect(hook.received).toHaveLength(0);
});

it('lists deliveries newest first, with their fields, up to limit', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Logged', url);
  const hook = await receiver();
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  for (const title of ['a', 'b', 'c']) await newColumn(owner, board.id, title, url);
  await eventually(async () => {
    const all = await deliveries(owner, webhook.id);
    expect(all).toHaveLength(3);
    expect(all.every((d) => d.status === 'delivered')).toBe(true);
  }, WAIT_MS);
  const all = await deliveries(owner, webhook.id);
  expect(all.map((d) => d.seq)).toEqual([3, 2, 1]);
  for (const delivery of all) {
    const got = hook.of(delivery.event_id);
    expect(got).toHaveLength(1);
    expect(delivery).toEqual({
      id: got[0]!.headers['webhook-id'],
      event_id: got[0]!.json.event_id,
      type: 'column.created',
      seq: got[0]!.json.seq,
      status: 'delivered',
      attempts: 1,
      last_attempt_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      last_status_code: 204,
      last_error: null,
      next_attempt_at: null,
    });
  }
  expect((await deliveries(owner, webhook.id, 2)).map((d) => d.seq)).toEqual([3, 2]);
});

it("delivers board.deleted, then the board's webhooks are gone", async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Doomed', url);
  const hook = await receiver();
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  await newColumn(owner, board.id, 'One', url);
  expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token, url })).status).toBe(204);
  await eventually(async () => expect(hook.received.map((r) => r.json.type)).toContain('board.deleted'), WAIT_MS);
  const deleted = hook.received.find((r) => r.json.type === 'board.deleted')!;
  expect(deleted.json).toMatchObject({ type: 'board.deleted', board_id: board.id, seq: 2 });
  expect(verify(webhook.secret, deleted)).toEqual(deleted.json);
  expect((await call('GET', `/webhooks/${webhook.id}`, { token: owner.token, url })).status).toBe(404);
  expect((await call('GET', `/webhooks/${webhook.id}/deliveries`, { token: owner.token, url })).status).toBe(404);
});

it('switches a webhook off after 50 deliveries failed in a row; PATCH active true switches it on again', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Broken receiver', url);
  const hook = await receiver((_req, res) => res.writeHead(503).end());
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  // A healthy webhook beside it: once it has an event, the fanout has read the webhooks for it.
  const witness = await receiver();
  await createWebhook(owner, board.id, { url: witness.url });
  const titles = (r: Received[]) => r.map((got) => (got.json.board as { title?: string } | undefined)?.title);
  for (let n = 1; n <= 50; n++)
    await ok(call('PATCH', `/boards/${board.id}`, { token: owner.token, body: { title: `Try ${n}` }, url }));

  await eventually(
    async () => {
      const got = await call('GET', `/webhooks/${webhook.id}`, { token: owner.token, url });
      expect(got.body).toMatchObject({ active: false, disabled_reason: 'failing' });
    },
    300_000,
    500,
  );
  const log = await deliveries(owner, webhook.id, 100);
  expect(log).toHaveLength(50);
  expect(log.every((d) => d.status === 'failed' && d.attempts === 3 && d.last_error === 'http_503')).toBe(true);

  // Switched off: a change is not delivered (no delivery made).
  await ok(call('PATCH', `/boards/${board.id}`, { token: owner.token, body: { title: 'While off' }, url }));
  await eventually(async () => expect(titles(witness.received)).toContain('While off'), WAIT_MS);
  // On again, and the receiver mended: the next change is delivered.
  hook.state.answer = (_req, res) => res.writeHead(200).end();
  const on = await call('PATCH', `/webhooks/${webhook.id}`, { token: owner.token, body: { active: true }, url });
  expect(on.body).toMatchObject({ active: true, disabled_reason: null });
  await ok(call('PATCH', `/boards/${board.id}`, { token: owner.token, body: { title: 'Back on' }, url }));
  await eventually(async () => expect(titles(hook.received)).toContain('Back on'), WAIT_MS);
  expect(titles(hook.received)).not.toContain('While off');
  const [latest] = await deliveries(owner, webhook.id, 1);
  expect(latest).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200 });
});

it('attempts a delivery once, however many copies of its message arrive while it is in flight', async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Duplicated', url);
  const held: ServerResponse[] = [];
  const hook = await receiver((_req, res) => held.push(res));
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  await newColumn(owner, board.id, 'One', url);
  await eventually(async () => expect(hook.received).toHaveLength(1), WAIT_MS);

  // The attempt is in flight (its answer held): three more copies of its message, as SQS's
  // at-least-once delivery or a repeated fanout could send them.
  const env = localEnv(dataDir);
  const table = localDocumentClient(env);
  const sqs = new SQSClient({
    endpoint: env.AWS_ENDPOINT_URL_SQS,
    ...localClientConfig(env),
  });
  try {
    const items = await readPartition(table, env.TABLE_NAME!, `WEBHOOK#${webhook.id}`);
    const delivery = items.find((item) => String(item.sk).startsWith('DELIVERY#'))!;
    expect(delivery).toMatchObject({ status: 'pending', attempts: 0 });
    const body = JSON.stringify({ webhook_id: webhook.id, board_id: board.id, delivery_sk: delivery.sk });
    for (let n = 0; n < 3; n++) await sqs.send(new SendMessageCommand({ QueueUrl: env.WEBHOOK_QUEUE_URL, MessageBody: body }));
    // Every copy received and handled: none visible, at most the attempt's own message in flight.
    await eventually(async () => {
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: env.WEBHOOK_QUEUE_URL,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      expect(Attributes?.ApproximateNumberOfMessages).toBe('0');
      expect(Number(Attributes?.ApproximateNumberOfMessagesNotVisible)).toBeLessThanOrEqual(1);
    }, WAIT_MS);
  } finally {
    sqs.destroy();
    table.destroy();
  }
  // From now on every attempt is answered at once.
  hook.state.answer = (_req, res) => res.writeHead(200).end();
  for (const res of held) res.writeHead(200).end();
  await eventually(async () => expect((await deliveries(owner, webhook.id))[0]?.status).not.toBe('pending'), WAIT_MS);
  // Every request the receiver got is an attempt the delivery recorded: the copies made none.
  // (1 unless the held attempt outlived its 10 s limit on a slow machine and was retried.)
  const [final] = await deliveries(owner, webhook.id);
  expect(hook.received).toHaveLength(final!.attempts);
  expect(new Set(hook.received.map((got) => got.headers['webhook-id'])).size).toBe(1);
});

it("switching off is conditional on the failure fields the worker read: an owner's PATCH in between wins", async () => {
  const owner = await newUser(url);
  const board = await newBoard(owner, 'Raced', url);
  const hook = await receiver();
  const webhook = await createWebhook(owner, board.id, { url: hook.url });
  // The worker's own writes, run here against the stack's table.
  const env = localEnv(dataDir);
  runStorageCodeOn(env);
  const { switchOff, webhookFailed } = await import('../../lib/data/deliveries');
  const get = async () => (await call('GET', `/webhooks/${webhook.id}`, { token: owner.token, url })).body;

  // The worker reads the fields after a failure, then the owner switches the webhook on (which
  // resets them) before the worker's switch-off lands: the switch-off does nothing.
  const seen = await webhookFailed(board.id, webhook.id, new Date(), true);
  expect(seen).toMatchObject({ active: true, failed_in_row: 1 });
  expect((await call('PATCH', `/webhooks/${webhook.id}`, { token: owner.token, body: { active: true }, url })).status).toBe(200);
  expect(await switchOff(board.id, webhook.id, seen!)).toBe(false);
  expect(await get()).toMatchObject({ active: true, disabled_reason: null });

  // With nothing in between it lands.
  const again = await webhookFailed(board.id, webhook.id, new Date(), true);
  expect(again).toMatchObject({ active: true, failed_in_row: 1 });
  expect(await switchOff(board.id, webhook.id, again!)).toBe(true);
  expect(await get()).toMatchObject({ active: false, disabled_reason: 'failing' });
  // A second worker that read the same fields finds it already off.
  expect(await switchOff(board.id, webhook.id, again!)).toBe(false);
});
