import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { call, newBoard, newColumn, newUser, type Reply, type TestUser } from '../support/api';
import { boardSeq, oneTo, readAllEvents } from '../support/event-log';
import { closeServers, startJsonReceiver } from '../support/http-servers';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { eventually } from '../support/wait';

/**
 * Webhook writes on a busy board (docs/data-model.md, "Busy boards: writers take turns"). Creating
 * a webhook and switching on one that was off require the board's `seq` unchanged, so that the
 * webhook's `from_seq` is exact: racing the writers of a busy board, such a write would lose every
 * race; it takes its turn like a change of the log instead. Checked over the real local stack of
 * this file (REST, the table's stream, the fanout, the SQS stand-in, the worker, real HTTP
 * receivers on 127.0.0.1):
 * - while 16 clients create cards as fast as they can, the writes succeed, no card create is
 *   refused, the log stays 1..n with every create once, each webhook receives exactly the events
 *   numbered above its `from_seq`, and the board's queue is left empty;
 * - on a board whose queue is not empty (a writer died holding its turn, as busy-boards.test.ts
 *   makes one), the two writes queue rather than overtake it, and hand the turn on, refused or
 *   not; the webhook writes that leave `seq` alone take no ticket.
 * How far the load has got is counted in answers, never in time: nothing here depends on the
 * machine's speed.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'task-board-webhook-busy-'));
let stack: RunningStack | undefined;
let url: string;
let env: Record<string, string>;
let db: DynamoDBDocumentClient | undefined;

beforeAll(async () => {
  stack = await startStackProcess(dataDir, { WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '1' });
  url = stack.url;
  env = localEnv(dataDir);
  db = localDocumentClient(env);
});

const servers: Server[] = [];
afterAll(async () => {
  db?.destroy();
  await closeServers(servers);
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Hang guard for arrivals (deliveries, the load's answers), not a performance target. */
const WAIT_MS = 120_000;
/** Clients creating cards at once. */
const CLIENTS = 16;
/** Creates that must have answered before the webhook writes are sent, and again after they answered. */
const CREATES_AROUND = 2 * CLIENTS;

const as = (user: TestUser) => ({ token: user.token, url });

/**
 * CLIENTS clients creating cards in one column, each sending its next create as soon as the last
 * one answered, until `stop()`, which resolves with every answer.
 */
function startLoad(user: TestUser, columnId: string) {
  const replies: Reply[] = [];
  let stopped = false;
  const clients = Promise.all(
    oneTo(CLIENTS).map(async (client) => {
      for (let n = 1; !stopped; n++) {
        replies.push(
          await call('POST', `/columns/${columnId}/cards`, { ...as(user), body: { title: `client ${client} #${n}` } }),
        );
      }
    }),
  );
  return {
    /** Resolves once `count` more creates answered than had when called. */
    async answered(count: number) {
      const target = replies.length + count;
      await eventually(async () => expect(replies.length).toBeGreaterThanOrEqual(target), WAIT_MS, 10);
    },
    async stop() {
      stopped = true;
      await clients;
      return replies;
    },
  };
}

/** An item of the board's partition as stored, read behind the API. */
async function boardItem(boardId: string, sk = '#BOARD'): Promise<Record<string, unknown>> {
  const { Item } = await db!.send(
    new GetCommand({ TableName: env.TABLE_NAME!, Key: { pk: `BOARD#${boardId}`, sk }, ConsistentRead: true }),
  );
  return Item ?? {};
}

/** The `from_seq` a webhook was stored with: only events numbered above it are its. */
const fromSeqOf = async (boardId: string, webhookId: string) =>
  (await boardItem(boardId, `WEBHOOK#${webhookId}`)).from_seq as number;

/** The board item's queue counters. */
async function queueOf(boardId: string): Promise<{ head: number; next: number }> {
  const board = await boardItem(boardId);
  return { head: (board.turn_head as number | undefined) ?? 0, next: (board.turn_next as number | undefined) ?? 0 };
}

/** The board's queue is empty: everyone who took a ticket, the webhook writes included, handed the turn on. */
async function expectQueueEmpty(boardId: string) {
  const queue = await queueOf(boardId);
  expect(queue.head).toBe(queue.next);
}

/**
 * A writer took a ticket, its turn came (the queue was empty), and it died holding it: the queue
 * is not empty until a waiter skips it (after 3 s). Answers the queue as it then is.
 */
async function deadHolder(boardId: string) {
  await db!.send(
    new UpdateCommand({
      TableName: env.TABLE_NAME!,
      Key: { pk: `BOARD#${boardId}`, sk: '#BOARD' },
      UpdateExpression: 'SET turn_next = if_not_exists(turn_next, :zero) + :one, turn_head = if_not_exists(turn_head, :zero)',
      ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
    }),
  );
  const queue = await queueOf(boardId);
  expect(queue.next).toBe(queue.head + 1);
  return queue;
}

/** The seqs of the deliveries the fanout made for a webhook (its deliveries log, every page), sorted. */
async function deliveredSeqs(webhookId: string): Promise<number[]> {
  const items = await readPartition(db!, env.TABLE_NAME!, `WEBHOOK#${webhookId}`);
  return uniqueSorted(items.filter((item) => String(item.sk).startsWith('DELIVERY#')).map((item) => item.seq as number));
}

const uniqueSorted = (seqs: number[]) => [...new Set(seqs)].sort((a, b) => a - b);

/** Every create of the load answered 201: none refused (503) or failed. */
function expectAllCreated(replies: Reply[]) {
  expect(replies.filter((reply) => reply.status !== 201).map((reply) => [reply.status, reply.body])).toEqual([]);
}

const createHook = (user: TestUser, boardId: string, body: Record<string, unknown>) =>
  call('POST', `/boards/${boardId}/webhooks`, { ...as(user), body });
const patchHook = (user: TestUser, webhookId: string, body: Record<string, unknown>) =>
  call('PATCH', `/webhooks/${webhookId}`, { ...as(user), body });

describe('webhook writes while 16 clients create cards in one column as fast as they can', () => {
  it('creating a webhook answers 201 and switching one on 200; each receives exactly the events after its from_seq', async () => {
    const owner = await newUser(url);
    const board = await newBoard(owner, 'Busy with webhooks', url);
    const column = await newColumn(owner, board.id, 'Todo', url);
    const [created, switched] = await Promise.all([startJsonReceiver(servers), startJsonReceiver(servers)]);
    // The webhook to switch on, made and switched off while the board is quiet.
    const off = await createHook(owner, board.id, { url: switched.url });
    expect(off.status).toBe(201);
    expect((await patchHook(owner, off.body.id, { active: false })).status).toBe(200);

    const load = startLoad(owner, column.id);
    await load.answered(CREATES_AROUND);
    const seqBefore = await boardSeq(owner, board.id, url);
    const [create, switchOn] = await Promise.all([
      createHook(owner, board.id, { url: created.url }),
      patchHook(owner, off.body.id, { active: true }),
    ]);
    const seqAfter = await boardSeq(owner, board.id, url);
    await load.answered(CREATES_AROUND);
    const replies = await load.stop();

    expect([create.status, switchOn.status]).toEqual([201, 200]);
    expect(switchOn.body).toMatchObject({ active: true, created_by: owner.id });
    expectAllCreated(replies);
    // The board is quiet again: one last card, numbered after every other event.
    const last = await call('POST', `/columns/${column.id}/cards`, { ...as(owner), body: { title: 'last' } });
    expect(last.status).toBe(201);

    // The log: 1..n, and every create in it exactly once (none lost, none duplicated).
    const { events } = await readAllEvents(owner, board.id, 0, 1000, url);
    const seqs = events.map((event) => event.seq);
    expect(seqs).toEqual(oneTo(events.length));
    const createdIds = events
      .filter((event) => event.type === 'card.created')
      .map((event) => (event.card as { id: string } | undefined)?.id);
    expect(createdIds.sort()).toEqual([...replies, last].map((reply) => reply.body.id as string).sort());
    expect(events.at(-1)).toMatchObject({ type: 'card.created', card: { id: last.body.id } });

    for (const [webhookId, receiver] of [
      [create.body.id as string, created],
      [off.body.id as string, switched],
    ] as const) {
      // from_seq is the board's seq when the write committed: a seq the log has, between the
      // board's seq read before the request and the one read after its answer.
      const fromSeq = await fromSeqOf(board.id, webhookId);
      expect(seqs).toContain(fromSeq);
      expect(fromSeq).toBeGreaterThanOrEqual(seqBefore);
      expect(fromSeq).toBeLessThanOrEqual(seqAfter);
      const expected = seqs.filter((seq) => seq > fromSeq);
      // The fanout makes every delivery of an event in one step, in the log's order: once the
      // last event has arrived, every delivery the webhook will ever get exists.
      await eventually(
        async () => expect(receiver.received.map((event) => event.seq)).toEqual(expect.arrayContaining(expected)),
        WAIT_MS,
      );
      expect(uniqueSorted(receiver.received.map((event) => event.seq as number))).toEqual(expected);
      expect(await deliveredSeqs(webhookId)).toEqual(expected);
    }
    await expectQueueEmpty(board.id);
  });
});

/*
 * A writer that died holding its turn keeps the queue from being empty until a waiter skips it,
 * which only a writer that queues does: a write that overtook the queue would commit at once and
 * leave the dead holder's ticket at the head. So each case below ends with the queue empty only if
 * the write queued, waited its turn and handed it on in its own write (or, refused, on leaving).
 */
describe('a board whose queue is not empty (a writer died holding its turn)', () => {
  async function quietBoard() {
    const owner = await newUser(url);
    const board = await newBoard(owner, 'Stuck queue', url);
    await newColumn(owner, board.id, 'Todo', url);
    const { url: target } = await startJsonReceiver(servers);
    return { owner, board, target };
  }

  it('creating a webhook waits its turn rather than overtake: 201, from_seq the board seq, the queue empty after', async () => {
    const { owner, board, target } = await quietBoard();
    const seq = await boardSeq(owner, board.id, url);
    await deadHolder(board.id);
    const reply = await createHook(owner, board.id, { url: target });
    expect(reply.status).toBe(201);
    expect(await fromSeqOf(board.id, reply.body.id)).toBe(seq);
    await expectQueueEmpty(board.id);
  });

  it('switching a webhook on waits its turn rather than overtake: 200, from_seq the board seq, the queue empty after', async () => {
    const { owner, board, target } = await quietBoard();
    const hook = await createHook(owner, board.id, { url: target });
    expect((await patchHook(owner, hook.body.id, { active: false })).status).toBe(200);
    const seq = await boardSeq(owner, board.id, url);
    await deadHolder(board.id);
    const reply = await patchHook(owner, hook.body.id, { active: true });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ active: true, created_by: owner.id });
    expect(await fromSeqOf(board.id, hook.body.id)).toBe(seq);
    await expectQueueEmpty(board.id);
  });

  it('a create refused when its turn comes (409: the board has 10 webhooks) hands the turn on', async () => {
    const { owner, board, target } = await quietBoard();
    for (let n = 0; n < 10; n++) {
      // Selecting an event this test never causes: no deliveries.
      expect((await createHook(owner, board.id, { url: target, events: ['board.deleted'] })).status).toBe(201);
    }
    await deadHolder(board.id);
    expect((await createHook(owner, board.id, { url: target })).status).toBe(409);
    await expectQueueEmpty(board.id);
    // The board is not stuck: a change goes through.
    expect((await newColumn(owner, board.id, 'Done', url)).title).toBe('Done');
  });

  it('the webhook writes that leave seq alone take no ticket: an edit, a switch-off and a delete', async () => {
    const { owner, board, target } = await quietBoard();
    const hook = await createHook(owner, board.id, { url: target });
    const stuck = await deadHolder(board.id);
    expect((await patchHook(owner, hook.body.id, { description: 'renamed' })).status).toBe(200);
    // Switching on a webhook already on changes who it speaks for, not from_seq.
    expect((await patchHook(owner, hook.body.id, { active: true })).status).toBe(200);
    expect((await patchHook(owner, hook.body.id, { active: false })).status).toBe(200);
    expect((await call('DELETE', `/webhooks/${hook.body.id}`, as(owner))).status).toBe(204);
    expect(await queueOf(board.id)).toEqual(stuck);
  });
});
