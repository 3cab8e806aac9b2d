import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { call, newBoard, newColumn, newUser, type TestUser } from '../support/api';
import { closeServers } from '../support/http-servers';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { localDocumentClient, localEnv, readPartition, runStorageCodeOn } from '../support/local-table';
import { eventually } from '../support/wait';

/**
 * One webhook's attempts in flight are capped (docs/webhooks.md "One webhook's attempts in
 * flight"): over the real local stack (stream, fanout, the SQS stand-in, the worker, real HTTP
 * receivers on 127.0.0.1), a receiver that never answers gets a backlog of events, and a healthy
 * receiver on the same board gets every one of them while that backlog is still pending; the hanging
 * receiver never has more than WEBHOOK_MAX_IN_FLIGHT requests open at once. The race between two
 * workers for one slot runs the worker's own claim against the stack's DynamoDB Local. Nothing
 * asserts how long anything took: waits are hang guards, the assertions are on states and counts.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'task-board-webhook-isolation-'));
let stack: RunningStack | undefined;
let url: string;
let env: Record<string, string>;

beforeAll(async () => {
  // Three attempts a delivery, a second apart: the hanging receiver's backlog is 3 attempts per event.
  stack = await startStackProcess(dataDir, { WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '1,1' });
  url = stack.url;
  env = localEnv(dataDir);
  // The worker's own data functions, run here against the stack's table (the race test).
  runStorageCodeOn(env);
});

const servers: Server[] = [];
afterAll(async () => {
  await closeServers(servers);
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

const WAIT_MS = 180_000;

/** A real HTTP receiver on 127.0.0.1 that counts the requests open at once; `hang` never answers. */
async function receiver(hang: boolean) {
  const state = { received: [] as Record<string, unknown>[], open: 0, peak: 0 };
  const server = http.createServer((req, res) => {
    state.open += 1;
    state.peak = Math.max(state.peak, state.open);
    res.on('close', () => {
      state.open -= 1;
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      state.received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      if (!hang) res.writeHead(204).end();
      // Hanging: the worker's 10 s limit ends each attempt (it closes the connection).
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`, state };
}

async function createWebhook(owner: TestUser, boardId: string, target: string) {
  const reply = await call('POST', `/boards/${boardId}/webhooks`, { token: owner.token, body: { url: target }, url });
  if (reply.status !== 201) throw new Error(`create webhook failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as { id: string };
}

const deliveries = async (owner: TestUser, webhookId: string) => {
  const reply = await call('GET', `/webhooks/${webhookId}/deliveries?limit=100`, { token: owner.token, url });
  expect(reply.status).toBe(200);
  return reply.body as { status: string; attempts: number; type: string }[];
};

it('a receiver that never answers, with a backlog, holds at most its slots: another webhook gets every event while that backlog is pending', async () => {
  const { WEBHOOK_MAX_IN_FLIGHT } = await import('../../lib/data/deliveries');
  const owner = await newUser(url);
  const board = await newBoard(owner, 'One hangs', url);
  const hanging = await receiver(true);
  const healthy = await receiver(false);
  const stuck = await createWebhook(owner, board.id, hanging.url);
  const fine = await createWebhook(owner, board.id, healthy.url);

  // A backlog: 30 events at once (each also delivered to the healthy webhook). Uncapped, the worker
  // (10 invocations of 10 messages) would open up to 30 requests to the hanging receiver at once.
  const column = await newColumn(owner, board.id, 'Backlog', url);
  const cards: string[] = [];
  for (let n = 0; n < 30; n++) {
    const reply = await call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: `c${n}` }, url });
    expect(reply.status).toBe(201);
    cards.push((reply.body as { id: string }).id);
  }

  // The healthy receiver gets every card.created...
  const createdAt = (got: Record<string, unknown>[]) =>
    got.filter((r) => r.type === 'card.created').map((r) => (r.card as { id: string }).id);
  await eventually(async () => expect(createdAt(healthy.state.received).sort()).toEqual([...cards].sort()), WAIT_MS, 200);
  // ...while the hanging webhook's backlog is still pending: 31 deliveries of 3 attempts of 10 s,
  // at most 4 at a time, cannot all have ended.
  const stuckLog = await deliveries(owner, stuck.id);
  expect(stuckLog).toHaveLength(31);
  expect(stuckLog.filter((d) => d.status === 'pending').length).toBeGreaterThan(0);
  expect(createdAt(hanging.state.received).length).toBeLessThan(cards.length * 3);
  // Every healthy delivery is recorded delivered, at its first attempt.
  await eventually(async () => {
    const fineLog = await deliveries(owner, fine.id);
    expect(fineLog.map((d) => [d.status, d.attempts])).toEqual(fineLog.map(() => ['delivered', 1]));
  }, WAIT_MS);

  // The slots fill up (the backlog is far larger), and never more than them are open at once.
  await eventually(async () => expect(hanging.state.peak).toBe(WEBHOOK_MAX_IN_FLIGHT), WAIT_MS, 200);
  expect(hanging.state.peak).toBeLessThanOrEqual(WEBHOOK_MAX_IN_FLIGHT);

  // The healthy webhook's slots were released with their records: none is held.
  const table = localDocumentClient(env);
  try {
    const items = await readPartition(table, env.TABLE_NAME!, `WEBHOOK#${fine.id}`);
    expect(items.filter((item) => String(item.sk).startsWith('#LEASE#'))).toEqual([]);
  } finally {
    table.destroy();
  }
});

describe('two workers racing for one slot (the worker’s claim on the real table)', () => {
  const pendingDelivery = async (table: ReturnType<typeof localDocumentClient>, webhookId: string) => {
    const { newDeliveryRecord } = await import('../../lib/data/deliveries');
    const record = newDeliveryRecord({
      webhookId,
      boardId: 'race-board',
      event: { type: 'card.created', event_id: randomUUID(), occurred_at: new Date().toISOString() },
    });
    await table.send(new PutCommand({ TableName: env.TABLE_NAME, Item: record }));
    return record;
  };

  it.each([
    ['absent', undefined],
    ['held by a claim that has expired', 'expired'],
  ] as const)('only one of two claims takes the last free slot (%s); the other is busy', async (_what, kind) => {
    const { claimAttempt, releaseLease, WEBHOOK_MAX_IN_FLIGHT } = await import('../../lib/data/deliveries');
    const { CLAIM_MS } = await import('../../lib/queue/deliver');
    const table = localDocumentClient(env);
    try {
      for (let round = 0; round < 5; round++) {
        const webhookId = `race-${randomUUID()}`;
        const now = Date.now();
        // Every slot held but the last, which is free as read.
        const leases = Array.from({ length: WEBHOOK_MAX_IN_FLIGHT }, (_, slot) => ({
          webhook_id: webhookId,
          slot,
          held_until: slot === WEBHOOK_MAX_IN_FLIGHT - 1 ? now - 1000 : now + 60_000,
          claim_token: `holder-${slot}`,
          delivery_sk: 'DELIVERY#0#other',
          ttl: Math.floor(now / 1000) + 3600,
        }));
        const stored = kind === 'expired' ? leases : leases.slice(0, -1);
        for (const lease of stored)
          await table.send(
            new PutCommand({
              TableName: env.TABLE_NAME,
              Item: { pk: `WEBHOOK#${webhookId}`, sk: `#LEASE#${lease.slot}`, ...lease },
            }),
          );
        const read = kind === 'expired' ? leases : [...leases.slice(0, -1), undefined];
        const [a, b] = [await pendingDelivery(table, webhookId), await pendingDelivery(table, webhookId)];

        const at = new Date();
        const claims = await Promise.all([a, b].map((d) => claimAttempt(d, read, at, CLAIM_MS)));
        expect(claims.map((c) => c.outcome).sort()).toEqual(['busy', 'claimed']);
        const won = claims.find((c) => c.outcome === 'claimed') as { token: string; slot: number };
        expect(won.slot).toBe(WEBHOOK_MAX_IN_FLIGHT - 1);

        const items = await readPartition(table, env.TABLE_NAME!, `WEBHOOK#${webhookId}`);
        const slot = items.find((item) => item.sk === `#LEASE#${WEBHOOK_MAX_IN_FLIGHT - 1}`);
        expect(slot).toMatchObject({ claim_token: won.token, held_until: at.getTime() + CLAIM_MS });
        // The loser's delivery was not claimed: its transaction wrote nothing.
        const claimed = items.filter((item) => String(item.sk).startsWith('DELIVERY#') && item.claim_token !== undefined);
        expect(claimed.map((item) => item.claim_token)).toEqual([won.token]);

        // Only the holder's token releases the slot.
        expect(await releaseLease(webhookId, won.slot, 'someone-else')).toBe(false);
        expect(await releaseLease(webhookId, won.slot, won.token)).toBe(true);
        const after = await readPartition(table, env.TABLE_NAME!, `WEBHOOK#${webhookId}`);
        expect(after.some((item) => item.sk === `#LEASE#${won.slot}`)).toBe(false);
      }
    } finally {
      table.destroy();
    }
  });

  it('a slot read free but taken since (its held_until changed) is busy, whatever the other slots', async () => {
    const { claimAttempt, WEBHOOK_MAX_IN_FLIGHT } = await import('../../lib/data/deliveries');
    const { CLAIM_MS } = await import('../../lib/queue/deliver');
    const table = localDocumentClient(env);
    try {
      const webhookId = `race-${randomUUID()}`;
      const delivery = await pendingDelivery(table, webhookId);
      // The worker read slot 0 absent (the others held); another worker took it since.
      const now = Date.now();
      const held = (slot: number) => ({
        webhook_id: webhookId,
        slot,
        held_until: now + 60_000,
        claim_token: `holder-${slot}`,
        delivery_sk: 'DELIVERY#0#other',
        ttl: 0,
      });
      await table.send(
        new PutCommand({ TableName: env.TABLE_NAME, Item: { pk: `WEBHOOK#${webhookId}`, sk: '#LEASE#0', ...held(0) } }),
      );
      const read = [undefined, ...Array.from({ length: WEBHOOK_MAX_IN_FLIGHT - 1 }, (_, n) => held(n + 1))];
      expect((await claimAttempt(delivery, read, new Date(), CLAIM_MS)).outcome).toBe('busy');
      const items = await readPartition(table, env.TABLE_NAME!, `WEBHOOK#${webhookId}`);
      expect(items.find((item) => item.sk === '#LEASE#0')).toMatchObject({ claim_token: 'holder-0' });
      expect(items.find((item) => String(item.sk).startsWith('DELIVERY#'))?.claim_token).toBeUndefined();
    } finally {
      table.destroy();
    }
  });
});
