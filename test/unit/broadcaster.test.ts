import { randomUUID } from 'node:crypto';
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { DeleteCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { handler } from '../../functions/events/broadcast';
import { documentClient } from '../../lib/data/db';
import { keys } from '../../lib/data/table';

/**
 * The broadcaster on stream records it must ignore, on failures DynamoDB Local cannot produce on
 * demand (a throttled read, a post that fails mid-board), and on states the real stack reaches
 * only by a race: a card still carrying a deleted label's id, a watch that outlived its membership
 * or its token, a removal and earlier changes in one batch. Its happy paths (every event kind with
 * its exact fields) run for real in test/integration/realtime.test.ts.
 */
const ddb = mockClient(documentClient);
const sockets = mockClient(ApiGatewayManagementApiClient);

beforeEach(() => {
  ddb.reset();
  sockets.reset();
  ddb.on(TransactWriteCommand).resolves({});
  ddb.on(DeleteCommand).resolves({});
  sockets.on(PostToConnectionCommand).resolves({});
  sockets.on(DeleteConnectionCommand).resolves({});
});

let sequence = 1000;
const at = '2026-11-23T10:00:00.000Z';
const soon = () => Math.floor(Date.now() / 1000) + 3600;

function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', image?: Record<string, unknown>, old?: Record<string, unknown>) {
  return {
    eventID: randomUUID(),
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      SequenceNumber: String(sequence++),
      ...(image ? { NewImage: marshall(image, { removeUndefinedValues: true }) } : {}),
      ...(old ? { OldImage: marshall(old, { removeUndefinedValues: true }) } : {}),
    },
  };
}

function card(boardId: string, overrides: Record<string, unknown> = {}) {
  const id = randomUUID();
  const columnId = randomUUID();
  return {
    ...keys.card(boardId, id),
    type: 'card',
    id,
    board_id: boardId,
    column_id: columnId,
    title: 'A card',
    description: null,
    position: 2,
    created_at: at,
    colpos: `${columnId}#c000000000000000`,
    ev: { id: randomUUID(), kind: 'card.updated', actor: randomUUID(), at },
    ...overrides,
  };
}

function watch(boardId: string, userId: string, expiresAt = soon()) {
  const connectionId = `conn-${randomUUID()}`;
  return {
    ...keys.watch(boardId, connectionId),
    type: 'watch',
    board_id: boardId,
    user_id: userId,
    connection_id: connectionId,
    expires_at: expiresAt,
  };
}
const member = (boardId: string, userId: string) => ({ ...keys.member(boardId, userId), user_id: userId, role: 'member' });
const boardItem = (boardId: string, labels: Record<string, string> = {}) => ({
  ...keys.board(boardId),
  type: 'board',
  id: boardId,
  labels,
});

const invoke = (records: ReturnType<typeof record>[]) => handler({ Records: records } as never, {} as never);
const posted = () =>
  sockets.commandCalls(PostToConnectionCommand).map((call) => ({
    to: call.args[0].input.ConnectionId,
    frame: JSON.parse(new TextDecoder().decode(call.args[0].input.Data as Uint8Array)),
  }));

describe('records that are no change of their own', () => {
  it('ignores removals, unstamped items, a stamp already seen and items outside a board: no read, no send', async () => {
    const boardId = randomUUID();
    const stale = card(boardId);
    const result = await invoke([
      record('REMOVE', undefined, card(boardId)),
      record('INSERT', { ...keys.connection('abc'), type: 'connection', user_id: randomUUID() }),
      // The board's counter changed, its stamp (an earlier rename's) did not.
      record('MODIFY', stale, stale),
      record('INSERT', { pk: 'TICKET#x', sk: '#TICKET', ev: stale.ev }),
    ]);
    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.calls()).toHaveLength(0);
    expect(sockets.calls()).toHaveLength(0);
  });
});

describe('an event to the watchers of its board', () => {
  it("shows a card's labels as the REST routes do: deleted ones left out, the rest in label order", async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    const [zebra, apple, deleted] = [randomUUID(), randomUUID(), randomUUID()];
    const labelled = card(boardId, { label_ids: new Set([zebra, deleted, apple]) });
    const board = boardItem(boardId, { [zebra]: 'zebra', [apple]: 'Apple' });
    ddb.on(QueryCommand).resolves({ Items: [board, member(boardId, userId), watch(boardId, userId)] });
    await invoke([record('MODIFY', labelled)]);
    expect(posted().map((p) => p.frame.card.label_ids)).toEqual([[apple, zebra]]);
  });

  it('sends nothing to a watcher who is no longer a member (their removal ends the watch); an expired one gets token.expired', async () => {
    const boardId = randomUUID();
    const change = card(boardId);
    const formerMember = watch(boardId, randomUUID());
    const expired = watch(boardId, randomUUID(), Math.floor(Date.now() / 1000) - 5);
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId), member(boardId, expired.user_id), formerMember, expired] });
    await invoke([record('MODIFY', change)]);
    expect(posted()).toEqual([{ to: expired.connection_id, frame: { type: 'token.expired' } }]);
    expect(sockets.commandCalls(DeleteConnectionCommand).map((call) => call.args[0].input.ConnectionId)).toEqual([
      expired.connection_id,
    ]);
    const droppedWatches = ddb
      .commandCalls(TransactWriteCommand)
      .flatMap((call) => call.args[0].input.TransactItems ?? [])
      .map((item) => item.Delete?.Key?.sk)
      .filter(Boolean);
    expect(droppedWatches).toEqual([`#WATCH#${expired.connection_id}`]);
  });

  it('forgets a socket API Gateway no longer has (GoneException)', async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    const vanished = watch(boardId, userId);
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId), member(boardId, userId), vanished] });
    sockets.on(PostToConnectionCommand).rejects(new GoneException({ message: 'gone', $metadata: {} }));
    expect(await invoke([record('MODIFY', card(boardId))])).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(DeleteCommand).map((call) => call.args[0].input.Key)).toEqual([
      keys.connection(vanished.connection_id),
    ]);
  });
});

describe('a batch that removes a member or deletes the board', () => {
  it('a member removed later in the batch hears what came before, then access.revoked with the removal itself', async () => {
    const boardId = randomUUID();
    const [owner, removed] = [randomUUID(), randomUUID()];
    const watcher = watch(boardId, removed);
    // Read after the batch was written: the removed member is no longer in the partition.
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId), member(boardId, owner), watcher, watch(boardId, owner)] });
    const before = card(boardId);
    const removal = {
      ...keys.boardEvent(boardId, randomUUID()),
      type: 'event',
      ev: { id: randomUUID(), kind: 'member.removed', actor: owner, at, data: { user_id: removed } },
    };
    const after = card(boardId);
    await invoke([record('MODIFY', before), record('INSERT', removal), record('MODIFY', after)]);
    const toRemoved = posted()
      .filter((p) => p.to === watcher.connection_id)
      .map((p) => [p.frame.type, p.frame.event_id, p.frame.actor_id]);
    expect(toRemoved).toEqual([
      ['card.updated', before.ev.id, before.ev.actor],
      ['access.revoked', removal.ev.id, owner],
    ]);
  });

  it('a board whose deletion has begun tells its watchers board.deleted only, without revoking anyone first', async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    const watcher = watch(boardId, userId);
    // The board item and the memberships are already gone when the batch is read.
    ddb.on(QueryCommand).resolves({ Items: [watcher] });
    const deleted = {
      ...keys.boardEvent(boardId, randomUUID()),
      type: 'event',
      ev: { id: randomUUID(), kind: 'board.deleted', actor: userId, at },
    };
    await invoke([record('MODIFY', card(boardId)), record('INSERT', deleted)]);
    expect(posted().map((p) => [p.to, p.frame.type])).toEqual([[watcher.connection_id, 'board.deleted']]);
  });
});

describe('partial batch failure', () => {
  it("reports the failed board's first undelivered record and still delivers the other boards", async () => {
    const [failing, healthy] = [randomUUID(), randomUUID()];
    const userId = randomUUID();
    const watcher = watch(healthy, userId);
    ddb
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': keys.boardPartition(failing) } })
      .rejects(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    ddb
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': keys.boardPartition(healthy) } })
      .resolves({ Items: [boardItem(healthy), member(healthy, userId), watcher] });
    const records = [record('MODIFY', card(healthy)), record('MODIFY', card(failing)), record('MODIFY', card(healthy))];
    const result = await invoke(records);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.dynamodb.SequenceNumber }] });
    expect(posted().map((p) => p.frame.board_id)).toEqual([healthy, healthy]);
  });

  it('a send failing on the second event of a board reports that record, not the first', async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId), member(boardId, userId), watch(boardId, userId)] });
    sockets
      .on(PostToConnectionCommand)
      .resolvesOnce({})
      .rejects(Object.assign(new Error('limit'), { name: 'LimitExceededException' }));
    const records = [record('MODIFY', card(boardId)), record('MODIFY', card(boardId)), record('MODIFY', card(boardId))];
    expect(await invoke(records)).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.dynamodb.SequenceNumber }] });
  });
});
