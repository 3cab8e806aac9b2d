import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatchWriteCommand, DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context } from 'aws-lambda';
import { keys } from '../../lib/data/table';
import { addMember, call, newBoard, newCard, newColumn, newUser } from '../support/api';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';

/**
 * Deletions of any size finish. The request makes the board or column unreachable and
 * answers; the collector (a consumer of the table's stream) removes the rest, and finishes a
 * deletion that was interrupted when it runs again. The interruption is made in process: the
 * collector's own handler gets a context that leaves it almost no time, as a Lambda near its
 * timeout would, and the stack's poller never sees this board's deletion (its event item is not
 * written), so only these two invocations touch it.
 *
 * How soon the clean-up finishes depends on the machine: on a busy shared one the collector can
 * take over 30 s, and the 1,500-card clean-up over 2 minutes. Each gets 4 minutes (its hang
 * guard), the file 10.
 */
const CLEANUP_BUDGET_MS = 240_000;
jest.setTimeout(600_000);

const env = localEnv();
const documentClient = localDocumentClient(env);
const table = env.TABLE_NAME!;
const partition = (pk: string) => readPartition(documentClient, table, pk);

type Collector = (event: unknown, context: Context) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;
let collect: Collector;

beforeAll(async () => {
  Object.assign(process.env, JSON.parse(readFileSync(join(process.env.TASK_BOARD_DATA_DIR!, 'local-env.json'), 'utf8')), {
    LOG_LEVEL: 'SILENT',
    METRICS_DISABLED: 'true',
  });
  collect = ((await import('../../functions/children/collect')) as { handler: Collector }).handler;
});

afterAll(() => documentClient.destroy());

const contextWith = (ms: number) => ({ getRemainingTimeInMillis: () => ms }) as unknown as Context;

/**
 * A stream record of a board.deleted log item's INSERT (lib/data/event-log.ts), as the event source
 * delivers it: the event exactly as watchers receive it, numbered `seq`.
 */
function boardDeletedRecord(boardId: string, actor: string, seq: number, sequence: string) {
  const occurredAt = new Date().toISOString();
  const keptUntil = Math.floor(Date.parse(occurredAt) / 1000) + 7 * 86_400;
  const event = {
    type: 'board.deleted',
    event_id: randomUUID(),
    board_id: boardId,
    actor_id: actor,
    occurred_at: occurredAt,
    seq,
  };
  const item = {
    pk: `BOARD#${boardId}`,
    sk: `~LOG#${String(seq).padStart(15, '0')}`,
    type: 'event',
    board_id: boardId,
    seq,
    kind: 'board.deleted',
    event,
    kept_until: keptUntil,
    ttl: keptUntil,
  };
  return { eventName: 'INSERT', eventSource: 'aws:dynamodb', dynamodb: { NewImage: marshall(item), SequenceNumber: sequence } };
}

/** Cards written straight to the table (as the API writes them), to make a board worth interrupting. */
async function bulkCards(boardId: string, columnId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const items = ids.flatMap((id, i) => [
    {
      pk: `BOARD#${boardId}`,
      sk: `CARD#${id}`,
      type: 'card',
      id,
      board_id: boardId,
      column_id: columnId,
      title: `Bulk ${i}`,
      description: 'x'.repeat(500),
      position: i + 10,
      created_at: new Date().toISOString(),
    },
    { pk: `CARD#${id}`, sk: '#LOOKUP', type: 'card_lookup', board_id: boardId },
  ]);
  const batches = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  for (let i = 0; i < batches.length; i += 8) {
    await Promise.all(
      batches
        .slice(i, i + 8)
        .map((batch) =>
          documentClient.send(
            new BatchWriteCommand({ RequestItems: { [table]: batch.map((Item) => ({ PutRequest: { Item } })) } }),
          ),
        ),
    );
  }
  return ids;
}

describe('deleting a board', () => {
  it('answers once the board is unreachable; the collector then empties its partition', async () => {
    const owner = await newUser();
    const member = await newUser();
    const board = await newBoard(owner);
    await addMember(owner, board.id, member);
    const column = await newColumn(owner, board.id);
    const cards = await Promise.all([1, 2, 3].map((n) => newCard(owner, column.id, { title: `Card ${n}` })));
    expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
    // At once: the former members are non-members, the children are gone for every route.
    expect((await call('GET', `/boards/${board.id}`, { token: member.token })).status).toBe(403);
    expect((await call('GET', `/cards/${cards[0]!.id}`, { token: owner.token })).status).toBe(404);
    expect(await partition(`USER#${member.id}`)).not.toContainEqual(expect.objectContaining({ sk: `BOARD#${board.id}` }));
    // Soon after: nothing of the board is left, in its partition or in the lookups.
    const deadline = Date.now() + CLEANUP_BUDGET_MS;
    let left = await partition(`BOARD#${board.id}`);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = await partition(`BOARD#${board.id}`);
    }
    expect(left).toEqual([]);
    // The board's card-id prefix item went with the board item: its cards' ids lead nowhere.
    for (const card of cards) expect(await partition(keys.cardBoardLookup(card.id).pk)).toEqual([]);
    expect(await partition(`COLUMN#${column.id}`)).toEqual([]);
  });

  it('an interrupted clean-up leaves the board unreachable (its cards 404), and running again removes every item', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const ids = await bulkCards(board.id, column.id, 1500);
    // The deletion as the request makes it, without the event item the stack's poller would see.
    await documentClient.send(new DeleteCommand({ TableName: table, Key: { pk: `BOARD#${board.id}`, sk: '#BOARD' } }));
    // The column was the board's change 1; its deletion is change 2.
    const record = boardDeletedRecord(board.id, owner.id, 2, '100');

    // A Lambda near its timeout: the collector gives the record back instead of being killed.
    const interrupted = await collect({ Records: [record] }, contextWith(650));
    expect(interrupted.batchItemFailures).toEqual([{ itemIdentifier: '100' }]);
    const halfway = await partition(`BOARD#${board.id}`);
    expect(halfway.length).toBeGreaterThan(0);
    expect((await call('GET', `/cards/${ids[0]}`, { token: owner.token })).status).toBe(404);

    // The event source's retry.
    expect(await collect({ Records: [record] }, contextWith(CLEANUP_BUDGET_MS))).toEqual({ batchItemFailures: [] });
    expect(await partition(`BOARD#${board.id}`)).toEqual([]);
    for (const id of [ids[0]!, ids[749]!, ids[1499]!]) expect(await partition(`CARD#${id}`)).toEqual([]);
    expect(await partition(`COLUMN#${column.id}`)).toEqual([]);
    expect(await partition(`USER#${owner.id}`)).not.toContainEqual(expect.objectContaining({ sk: `BOARD#${board.id}` }));
  });
});

describe('deleting a column', () => {
  it('answers once the column is unreachable; the collector then removes its cards and its mark on the board', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const [doomed, kept] = [await newColumn(owner, board.id), await newColumn(owner, board.id)];
    const cards = await Promise.all([1, 2, 3].map((n) => newCard(owner, doomed.id, { title: `Card ${n}` })));
    const survivor = await newCard(owner, kept.id);
    expect((await call('DELETE', `/columns/${doomed.id}`, { token: owner.token })).status).toBe(204);
    expect((await call('GET', `/cards/${cards[0]!.id}`, { token: owner.token })).status).toBe(404);
    const deadline = Date.now() + CLEANUP_BUDGET_MS;
    const remaining = async () => {
      const items = await partition(`BOARD#${board.id}`);
      const boardItem = items.find((item) => item.sk === '#BOARD') as { deleting_columns?: Set<string> };
      return {
        cards: items.filter((item) => String(item.sk).startsWith('CARD#')).length,
        marked: boardItem.deleting_columns?.size ?? 0,
      };
    };
    let state = await remaining();
    while ((state.cards > 1 || state.marked > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = await remaining();
    }
    expect(state).toEqual({ cards: 1, marked: 0 });
    for (const card of cards) expect((await call('GET', `/cards/${card.id}`, { token: owner.token })).status).toBe(404);
    expect((await call('GET', `/cards/${survivor.id}`, { token: owner.token })).status).toBe(200);
  });
});
