import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { call, newBoard, newColumn, newUser, type TestUser } from '../support/api';
import { closeServers, startJsonReceiver } from '../support/http-servers';
import { type RunningStack, startStackProcess, stopStackProcess } from '../support/local-process';
import { localDocumentClient, localEnv, readPartition, runStorageCodeOn } from '../support/local-table';
import { eventually } from '../support/wait';

/**
 * Who a webhook speaks for (docs/reference.md, "Webhooks": `created_by`, `creator_not_owner`, and the
 * rule that a webhook receives only events committed after it was created or switched on), written
 * as the attacks it defeats, over the real local stack of this file (REST, the table's stream, the
 * fanout, the SQS stand-in, the worker, real HTTP receivers on 127.0.0.1).
 *
 * The attacker is an owner who sets up a webhook to their own endpoint and is then taken off the
 * owners: removed, made a member, leaving, or deleting the account. Nothing the board does after
 * that may reach their endpoint. How "nothing arrives" is known without waiting an arbitrary time:
 * a witness webhook of an owner who stays gets every event, and the fanout makes all of an event's
 * deliveries in one step, so once the witness has the last event, the attacker's deliveries of
 * every event exist or never will; the attacker's deliveries log (read by the owner who stays) and
 * the receiver are then checked. Replays of the stream (a batch run again after the webhook was
 * made or switched on) are driven by calling the fanout here on the board's own log records.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'task-board-webhook-creators-'));
let stack: RunningStack | undefined;
let url: string;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startStackProcess(dataDir, { WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '1' });
  url = stack.url;
  env = localEnv(dataDir);
  // The fanout's own code, run here on the stack's table and queue (the replays).
  runStorageCodeOn(env);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SQS: env.AWS_ENDPOINT_URL_SQS,
    WEBHOOK_QUEUE_URL: env.WEBHOOK_QUEUE_URL,
    WEBHOOK_RETRY_SCHEDULE: '1',
  });
});

const servers: Server[] = [];
afterAll(async () => {
  await closeServers(servers);
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
});

const WAIT_MS = 120_000;

/** A webhook receiver (test/support/http-servers.ts) and the titles of the cards it was told of. */
async function receiver() {
  const { url: target, received } = await startJsonReceiver(servers);
  const titles = () => received.filter((event) => event.type === 'card.created').map((event) => event.card.title as string);
  return { url: target, received, titles };
}
type Receiver = Awaited<ReturnType<typeof receiver>>;

const as = (user: TestUser) => ({ token: user.token, url });
async function ok<T = any>(reply: Promise<{ status: number; body: T }>, ...status: number[]): Promise<T> {
  const answer = await reply;
  const expected = status.length > 0 ? status : [200, 201, 204];
  if (!expected.includes(answer.status)) throw new Error(`unexpected ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}
const createHook = (user: TestUser, boardId: string, target: string) =>
  call('POST', `/boards/${boardId}/webhooks`, { ...as(user), body: { url: target } });
const getHook = async (user: TestUser, id: string) => ok(call('GET', `/webhooks/${id}`, as(user)));
const patchHook = (user: TestUser, id: string, body: Record<string, unknown>) =>
  call('PATCH', `/webhooks/${id}`, { ...as(user), body });
const deliveries = async (user: TestUser, id: string) =>
  (await ok(call('GET', `/webhooks/${id}/deliveries?limit=100`, as(user)))) as { seq: number | null; type: string }[];
const boardSeq = async (user: TestUser, boardId: string) => (await ok(call('GET', `/boards/${boardId}`, as(user)))).seq as number;
const newCard = (user: TestUser, columnId: string, title: string) =>
  ok(call('POST', `/columns/${columnId}/cards`, { ...as(user), body: { title } }));

/**
 * A board of `keeper` with `attacker` as a second owner, the attacker's webhook to their own
 * receiver, and the keeper's witness webhook.
 */
async function boardWithAttackerHook() {
  const [keeper, attacker] = await Promise.all([newUser(url), newUser(url)]);
  const board = await newBoard(keeper, 'Quarterly plans', url);
  await ok(call('POST', `/boards/${board.id}/members`, { ...as(keeper), body: { email: attacker.email, role: 'owner' } }));
  const column = await newColumn(keeper, board.id, 'Todo', url);
  const [evil, witness] = await Promise.all([receiver(), receiver()]);
  const hook = await ok(createHook(attacker, board.id, evil.url));
  expect(hook).toMatchObject({ created_by: attacker.id, active: true, disabled_reason: null });
  const witnessHook = await ok(createHook(keeper, board.id, witness.url));
  // The attacker's webhook works while they are an owner.
  await newCard(keeper, column.id, 'shared while an owner');
  await eventually(async () => expect(evil.titles()).toContain('shared while an owner'), WAIT_MS);
  return { keeper, attacker, board, column, evil, witness, hook, witnessHook };
}

/**
 * After the attacker stopped being an owner at `changeSeq`: new cards, then, once the witness has
 * the last of them, no delivery of the attacker's webhook is above `changeSeq` and their receiver
 * got none of the new titles.
 */
async function expectNothingAfter(
  setup: { keeper: TestUser; column: { id: string }; evil: Receiver; witness: Receiver; hook: { id: string } },
  changeSeq: number,
) {
  const secrets = ['merger with Initech', 'layoffs in Q3', 'new CFO'];
  for (const title of secrets) await newCard(setup.keeper, setup.column.id, title);
  await eventually(async () => expect(setup.witness.titles()).toEqual(expect.arrayContaining(secrets)), WAIT_MS);
  const made = await deliveries(setup.keeper, setup.hook.id);
  expect(made.filter((delivery) => (delivery.seq ?? 0) > changeSeq)).toEqual([]);
  for (const title of secrets) expect(setup.evil.titles()).not.toContain(title);
  expect(setup.evil.received.filter((event) => (event.seq ?? 0) > changeSeq)).toEqual([]);
}

describe('a webhook speaks for its creator: it goes off when they stop being an owner', () => {
  it('removed by another owner: the webhook is off (creator_not_owner) and no later card reaches it', async () => {
    const setup = await boardWithAttackerHook();
    const { keeper, attacker, board, hook } = setup;
    await ok(call('DELETE', `/boards/${board.id}/members/${attacker.id}`, as(keeper)));
    const removedAt = await boardSeq(keeper, board.id);
    expect(await getHook(keeper, hook.id)).toMatchObject({
      active: false,
      disabled_reason: 'creator_not_owner',
      created_by: attacker.id,
    });
    await expectNothingAfter(setup, removedAt);
    // And the removed owner cannot switch it back on.
    expect((await patchHook(attacker, hook.id, { active: true })).status).toBe(403);
  });

  it('made a member: the same', async () => {
    const setup = await boardWithAttackerHook();
    const { keeper, attacker, board, hook } = setup;
    await ok(call('PATCH', `/boards/${board.id}/members/${attacker.id}`, { ...as(keeper), body: { role: 'member' } }));
    const demotedAt = await boardSeq(keeper, board.id);
    expect(await getHook(keeper, hook.id)).toMatchObject({ active: false, disabled_reason: 'creator_not_owner' });
    await expectNothingAfter(setup, demotedAt);
    // Still a member, no longer an owner: 403 on the webhook routes.
    expect((await patchHook(attacker, hook.id, { active: true })).status).toBe(403);
  });

  it('leaving the board: the same', async () => {
    const setup = await boardWithAttackerHook();
    const { keeper, attacker, board, hook } = setup;
    await ok(call('DELETE', `/boards/${board.id}/members/${attacker.id}`, as(attacker)));
    const leftAt = await boardSeq(keeper, board.id);
    expect(await getHook(keeper, hook.id)).toMatchObject({ active: false, disabled_reason: 'creator_not_owner' });
    await expectNothingAfter(setup, leftAt);
  });

  it('deleting the account: once the account is off the board, nothing later reaches the webhook', async () => {
    const setup = await boardWithAttackerHook();
    const { keeper, attacker, board, hook } = setup;
    await ok(call('DELETE', '/auth/account', { token: attacker.token, body: { password: attacker.password }, url }));
    // The account collector takes the account off the board after the answer (docs/accounts.md).
    await eventually(async () => {
      expect(await getHook(keeper, hook.id)).toMatchObject({ active: false, disabled_reason: 'creator_not_owner' });
    }, WAIT_MS);
    const members = (await ok(call('GET', `/boards/${board.id}/members`, as(keeper)))) as { user_id: string }[];
    expect(members.map((member) => member.user_id)).not.toContain(attacker.id);
    await expectNothingAfter(setup, await boardSeq(keeper, board.id));
  });

  it('a deleted account whose boards the collector has not reached yet: its webhook already gets nothing', async () => {
    const setup = await boardWithAttackerHook();
    const { keeper, attacker, board, hook } = setup;
    // The state between DELETE /auth/account's transaction (the profile gone) and the account
    // collector's removal from this board (the membership still there), held still by making it
    // directly in the table, without the deletion's marker that would start the collector.
    await localDocumentClient(env).send(
      new DeleteCommand({ TableName: env.TABLE_NAME, Key: { pk: `USER#${attacker.id}`, sk: '#PROFILE' } }),
    );
    const members = (await ok(call('GET', `/boards/${board.id}/members`, as(keeper)))) as { user_id: string }[];
    expect(members.map((member) => member.user_id)).toContain(attacker.id);
    expect(await getHook(keeper, hook.id)).toMatchObject({ active: true, created_by: attacker.id });
    await expectNothingAfter(setup, await boardSeq(keeper, board.id));
  });

  it('another owner switches it on again and becomes created_by; only events after that reach it', async () => {
    const setup = await boardWithAttackerHook();
    const { keeper, attacker, board, column, evil, hook } = setup;
    await ok(call('DELETE', `/boards/${board.id}/members/${attacker.id}`, as(keeper)));
    await expectNothingAfter(setup, await boardSeq(keeper, board.id));
    const on = await ok(patchHook(keeper, hook.id, { active: true }));
    expect(on).toMatchObject({ active: true, disabled_reason: null, created_by: keeper.id });
    expect(await getHook(keeper, hook.id)).toEqual(on);
    await newCard(keeper, column.id, 'after the keeper switched it on');
    await eventually(async () => expect(evil.titles()).toContain('after the keeper switched it on'), WAIT_MS);
    // The cards made while it was off never came, then or now.
    expect(evil.titles()).toEqual(['shared while an owner', 'after the keeper switched it on']);
  });

  it('an owner keeps the webhooks of co-owners: only the leaver’s go off', async () => {
    const setup = await boardWithAttackerHook();
    const { keeper, attacker, board, witnessHook } = setup;
    await ok(call('DELETE', `/boards/${board.id}/members/${attacker.id}`, as(keeper)));
    expect(await getHook(keeper, witnessHook.id)).toMatchObject({ active: true, disabled_reason: null, created_by: keeper.id });
  });
});

describe('races: a switch-on or a create against the removal never leaves the webhook on', () => {
  it('PATCH active true by the owner being removed, at the same time as the removal, on 6 boards', async () => {
    const setups = await Promise.all(Array.from({ length: 6 }, () => boardWithAttackerHook()));
    await Promise.all(
      setups.map(async ({ attacker, hook }) => {
        await ok(patchHook(attacker, hook.id, { active: false }));
      }),
    );
    const outcomes = await Promise.all(
      setups.map(async ({ keeper, attacker, board, hook }) => {
        const [switched, removed] = await Promise.all([
          patchHook(attacker, hook.id, { active: true }),
          call('DELETE', `/boards/${board.id}/members/${attacker.id}`, as(keeper)),
        ]);
        expect(removed.status).toBe(204);
        // Either the switch-on came first (and the removal switched it off again) or it was refused.
        expect([200, 403]).toContain(switched.status);
        return switched.status;
      }),
    );
    for (const setup of setups) {
      expect(await getHook(setup.keeper, setup.hook.id)).toMatchObject({
        active: false,
        disabled_reason: 'creator_not_owner',
        created_by: setup.attacker.id,
      });
    }
    await Promise.all(setups.map(async (setup) => expectNothingAfter(setup, await boardSeq(setup.keeper, setup.board.id))));
    expect(outcomes).toHaveLength(6);
  });

  it('a create by the owner being removed, at the same time as the removal, on 6 boards', async () => {
    const setups = await Promise.all(Array.from({ length: 6 }, () => boardWithAttackerHook()));
    const late = await Promise.all(
      setups.map(async ({ keeper, attacker, board }) => {
        const target = await receiver();
        const [created, removed] = await Promise.all([
          createHook(attacker, board.id, target.url),
          call('DELETE', `/boards/${board.id}/members/${attacker.id}`, as(keeper)),
        ]);
        expect(removed.status).toBe(204);
        expect([201, 403]).toContain(created.status);
        return { target, created };
      }),
    );
    for (const [i, setup] of setups.entries()) {
      const { created, target } = late[i]!;
      if (created.status === 201) {
        expect(await getHook(setup.keeper, created.body.id)).toMatchObject({
          active: false,
          disabled_reason: 'creator_not_owner',
          created_by: setup.attacker.id,
        });
      } else {
        const hooks = (await ok(call('GET', `/boards/${setup.board.id}/webhooks`, as(setup.keeper)))) as { url: string }[];
        expect(hooks.map((hook) => hook.url)).not.toContain(target.url);
      }
    }
    await Promise.all(
      setups.map(async (setup, i) => {
        await expectNothingAfter(setup, await boardSeq(setup.keeper, setup.board.id));
        expect(late[i]!.target.received).toEqual([]);
      }),
    );
  });
});

describe('a webhook receives only events committed after it was created or switched on', () => {
  /** Runs the fanout on every log record of the board, as the stream does when it runs a batch again. */
  async function replayLog(boardId: string) {
    const { fanOut } = await import('../../lib/data/webhook-fanout');
    const client = localDocumentClient(env);
    try {
      const items = await readPartition(client, env.TABLE_NAME!, `BOARD#${boardId}`);
      const log = items.filter((item) => item.type === 'event' && typeof item.seq === 'number');
      const records = log.map((item) => ({
        eventName: 'INSERT',
        dynamodb: { NewImage: marshall(item, { removeUndefinedValues: true }), SequenceNumber: String(item.seq) },
      }));
      expect(records.length).toBeGreaterThan(0);
      expect(await fanOut(records as never)).toEqual([]);
    } finally {
      client.destroy();
    }
  }

  it('events older than the webhook, handed to the fanout after it was made, are not delivered to it', async () => {
    const owner = await newUser(url);
    const board = await newBoard(owner, 'History', url);
    const column = await newColumn(owner, board.id, 'Todo', url);
    for (const title of ['old 1', 'old 2']) await newCard(owner, column.id, title);
    const target = await receiver();
    const hook = await ok(createHook(owner, board.id, target.url));
    const createdAt = await boardSeq(owner, board.id);
    await newCard(owner, column.id, 'new');
    await eventually(async () => expect(target.titles()).toEqual(['new']), WAIT_MS);

    await replayLog(board.id);
    const made = await deliveries(owner, hook.id);
    expect(made.map((delivery) => delivery.type)).toEqual(['card.created']);
    expect(made.every((delivery) => (delivery.seq ?? 0) > createdAt)).toBe(true);
    // A ping after the replay: once it is in, every message sent before it was handled too.
    await ok(call('POST', `/webhooks/${hook.id}/ping`, as(owner)), 202);
    await eventually(async () => expect(target.received.map((event) => event.type)).toContain('webhook.ping'), WAIT_MS);
    expect(target.titles()).toEqual(['new']);
  });

  it('switched off and on again: the events of the time it was off never come, even replayed', async () => {
    const owner = await newUser(url);
    const board = await newBoard(owner, 'Paused', url);
    const column = await newColumn(owner, board.id, 'Todo', url);
    const target = await receiver();
    const hook = await ok(createHook(owner, board.id, target.url));
    await newCard(owner, column.id, 'before the pause');
    await eventually(async () => expect(target.titles()).toEqual(['before the pause']), WAIT_MS);
    await ok(patchHook(owner, hook.id, { active: false }));
    for (const title of ['paused 1', 'paused 2']) await newCard(owner, column.id, title);
    await ok(patchHook(owner, hook.id, { active: true }));
    const onAt = await boardSeq(owner, board.id);

    await replayLog(board.id);
    await newCard(owner, column.id, 'after the pause');
    await eventually(async () => expect(target.titles()).toContain('after the pause'), WAIT_MS);
    const made = await deliveries(owner, hook.id);
    expect(made.filter((delivery) => delivery.type === 'card.created' && (delivery.seq ?? 0) <= onAt)).toHaveLength(1);
    expect(target.titles()).toEqual(['before the pause', 'after the pause']);
  });
});
