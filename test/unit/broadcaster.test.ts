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
import { documentClient } from '../../lib/data/db';
import { keys } from '../../lib/data/table';
import { broadcast } from '../../lib/socket/fanout';

/**
 * The broadcaster on stream records it must ignore (everything but a log item's INSERT), on
 * failures DynamoDB Local cannot produce on demand (a throttled read, a post that fails mid-board,
 * and the redelivery after it), and on states the real stack reaches only by a race: a watch that
 * outlived its membership or its token, a removal or a board's deletion with earlier changes in
 * one batch. Its records are log items' INSERTs as lib/data/event-log.ts writes them (the shape of
 * scripts/make-events.ts logItemBatch). Its happy paths (every event kind with its exact fields)
 * run for real in test/integration/realtime.test.ts and test/integration/event-log.test.ts.
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

/** An event exactly as a writer puts it into the board's log (lib/data/event-log.ts). */
interface LoggedEvent {
  type: string;
  event_id: string;
  board_id: string;
  actor_id: string;
  occurred_at: string;
  seq: number;
  [field: string]: unknown;
}
function boardEvent(
  boardId: string,
  seq: number,
  type: string,
  fields: Record<string, unknown> = {},
  actor: string = randomUUID(),
): LoggedEvent {
  return { type, event_id: randomUUID(), board_id: boardId, actor_id: actor, occurred_at: at, seq, ...fields };
}

/** The log item holding `event` (scripts/make-events.ts logItemBatch has the same shape). */
function logItem(event: LoggedEvent) {
  const keptUntil = Math.floor(Date.parse(at) / 1000) + 7 * 86_400;
  return {
    ...keys.logEntry(event.board_id, event.seq),
    type: 'event',
    board_id: event.board_id,
    seq: event.seq,
    kind: event.type,
    event,
    kept_until: keptUntil,
    ttl: keptUntil,
  };
}

/** The stream record of a log item's INSERT: the only record that carries an event. */
const logged = (event: LoggedEvent) => record('INSERT', logItem(event));

/** The record of a batch's run: consecutive events of one board in one log item, under the last one's seq. */
function loggedRun(events: LoggedEvent[]) {
  const last = events.at(-1)!;
  const keptUntil = Math.floor(Date.parse(at) / 1000) + 7 * 86_400;
  return record('INSERT', {
    ...keys.logEntry(last.board_id, last.seq),
    type: 'event',
    board_id: last.board_id,
    seq: last.seq,
    first_seq: events[0]!.seq,
    events,
    kept_until: keptUntil,
    ttl: keptUntil,
  });
}

function card(overrides: Record<string, unknown> = {}) {
  const id = randomUUID();
  const columnId = randomUUID();
  return {
    id,
    column_id: columnId,
    title: 'A card',
    description: null,
    position: 2,
    created_at: at,
    label_ids: [],
    ...overrides,
  };
}

/** A card.updated event of a new card, numbered `seq` on its board. */
const cardUpdated = (boardId: string, seq: number, actor?: string) =>
  boardEvent(boardId, seq, 'card.updated', { card: card() }, actor);

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
const boardItem = (boardId: string, labels: Record<string, string> = {}, seq = 1) => ({
  ...keys.board(boardId),
  type: 'board',
  id: boardId,
  labels,
  seq,
});

// The sockets' part of the change reader (lib/stream/publish.ts runs it beside the webhook fanout;
// test/unit/stream-readers.test.ts holds the two together).
const invoke = (records: ReturnType<typeof record>[]) => broadcast(records as never);
const posted = () =>
  sockets.commandCalls(PostToConnectionCommand).map((call) => ({
    to: call.args[0].input.ConnectionId,
    frame: JSON.parse(new TextDecoder().decode(call.args[0].input.Data as Uint8Array)),
  }));

describe('records that are no change of their own', () => {
  it('ignores removals, modifications, items that are no log item and log-shaped items outside a board: no read, no send', async () => {
    const boardId = randomUUID();
    const event = cardUpdated(boardId, 1);
    const changed = event.card as ReturnType<typeof card>;
    const result = await invoke([
      // A log item's TTL expiry (or the collector's deletion of a deleted board's log).
      record('REMOVE', undefined, logItem(event)),
      // A log item is written once; a MODIFY of one (none is made) must not send its event again.
      record('MODIFY', logItem(event), logItem(event)),
      record('INSERT', { ...keys.connection('abc'), type: 'connection', user_id: randomUUID() }),
      // The board item's counter moved with a change; that change's event is its log item's.
      record('MODIFY', boardItem(boardId, {}, 2), boardItem(boardId, {}, 1)),
      record('INSERT', { ...keys.card(boardId, changed.id), type: 'card', ...changed, board_id: boardId }),
      record('INSERT', { ...logItem(event), pk: 'TICKET#x', sk: '#TICKET' }),
    ]);
    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddb.calls()).toHaveLength(0);
    expect(sockets.calls()).toHaveLength(0);
  });
});

describe('an event to the watchers of its board', () => {
  it('sends the event exactly as the log holds it (seq, event_id, a card with its labels as written): only the audience is read', async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    const [apple, zebra] = [randomUUID(), randomUUID()];
    const event = boardEvent(boardId, 7, 'card.updated', { card: card({ label_ids: [apple, zebra] }) });
    // The board's labels have changed since the change was written: the event is what the change was.
    ddb
      .on(QueryCommand)
      .resolves({ Items: [boardItem(boardId, { [zebra]: 'zebra' }, 9), member(boardId, userId), watch(boardId, userId)] });
    await invoke([logged(event)]);
    expect(posted().map((p) => p.frame)).toEqual([event]);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(1);
  });

  it('sends nothing to a watcher who is no longer a member (their removal ends the watch); an expired one gets token.expired', async () => {
    const boardId = randomUUID();
    const formerMember = watch(boardId, randomUUID());
    const expired = watch(boardId, randomUUID(), Math.floor(Date.now() / 1000) - 5);
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId), member(boardId, expired.user_id), formerMember, expired] });
    await invoke([logged(cardUpdated(boardId, 1))]);
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
    expect(await invoke([logged(cardUpdated(boardId, 1))])).toEqual({ batchItemFailures: [] });
    expect(ddb.commandCalls(DeleteCommand).map((call) => call.args[0].input.Key)).toEqual([
      keys.connection(vanished.connection_id),
    ]);
  });

  it("sends a board's events in seq order, whatever the order of their records in the batch", async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId, {}, 3), member(boardId, userId), watch(boardId, userId)] });
    const events = [1, 2, 3].map((seq) => cardUpdated(boardId, seq));
    await invoke([logged(events[2]!), logged(events[0]!), logged(events[1]!)]);
    expect(posted().map((p) => p.frame.seq)).toEqual([1, 2, 3]);
  });
});

describe('a batch that removes a member or deletes the board', () => {
  it('a member removed later in the batch hears what came before, then access.revoked (no seq) with the removal itself', async () => {
    const boardId = randomUUID();
    const [owner, removed] = [randomUUID(), randomUUID()];
    const watcher = watch(boardId, removed);
    // Read after the batch was written: the removed member is no longer in the partition.
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId, {}, 3), member(boardId, owner), watcher, watch(boardId, owner)] });
    const before = cardUpdated(boardId, 1);
    const removal = boardEvent(boardId, 2, 'member.removed', { user_id: removed }, owner);
    const after = cardUpdated(boardId, 3);
    await invoke([logged(before), logged(removal), logged(after)]);
    const toRemoved = posted()
      .filter((p) => p.to === watcher.connection_id)
      .map((p) => p.frame);
    expect(toRemoved).toEqual([
      before,
      {
        type: 'access.revoked',
        event_id: removal.event_id,
        board_id: boardId,
        actor_id: owner,
        occurred_at: removal.occurred_at,
      },
    ]);
  });

  it("a deleted board's watchers hear the batch's earlier changes, then board.deleted, without anyone revoked first", async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    const watcher = watch(boardId, userId);
    // The board item and the memberships are already gone when the batch is read.
    ddb.on(QueryCommand).resolves({ Items: [watcher] });
    const edit = cardUpdated(boardId, 4);
    const deleted = boardEvent(boardId, 5, 'board.deleted', {}, userId);
    await invoke([logged(edit), logged(deleted)]);
    expect(posted().map((p) => [p.to, p.frame])).toEqual([
      [watcher.connection_id, edit],
      [watcher.connection_id, deleted],
    ]);
    // board.deleted ends every watch of the board.
    const droppedWatches = ddb
      .commandCalls(TransactWriteCommand)
      .flatMap((call) => call.args[0].input.TransactItems ?? [])
      .map((item) => item.Delete?.Key?.sk)
      .filter(Boolean);
    expect(droppedWatches).toEqual([`#WATCH#${watcher.connection_id}`]);
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
    const records = [logged(cardUpdated(healthy, 1)), logged(cardUpdated(failing, 1)), logged(cardUpdated(healthy, 2))];
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
    const records = [1, 2, 3].map((seq) => logged(cardUpdated(boardId, seq)));
    expect(await invoke(records)).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.dynamodb.SequenceNumber }] });
  });

  it('a redelivery from the reported record carries the same seq and event_id as the first delivery', async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId, {}, 3), member(boardId, userId), watch(boardId, userId)] });
    sockets
      .on(PostToConnectionCommand)
      .resolvesOnce({})
      .rejectsOnce(Object.assign(new Error('limit'), { name: 'LimitExceededException' }))
      .resolves({});
    const events = [1, 2, 3].map((seq) => cardUpdated(boardId, seq));
    const records = events.map(logged);
    const first = await invoke(records);
    expect(first).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.dynamodb.SequenceNumber }] });
    // Lambda (or the local poller) runs the batch again from the reported record.
    expect(await invoke(records.slice(1))).toEqual({ batchItemFailures: [] });
    const frames = posted().map((p) => p.frame);
    // Attempts: seq 1 sent, seq 2 failed; then seq 2 again and seq 3.
    expect(frames.map((f) => [f.seq, f.event_id])).toEqual([
      [1, events[0]!.event_id],
      [2, events[1]!.event_id],
      [2, events[1]!.event_id],
      [3, events[2]!.event_id],
    ]);
    expect(frames[1]).toEqual(frames[2]);
  });

  it("sends a batch's run event by event, and a failure inside it reports the run's record: its events are sent again", async () => {
    const boardId = randomUUID();
    const userId = randomUUID();
    ddb.on(QueryCommand).resolves({ Items: [boardItem(boardId, {}, 4), member(boardId, userId), watch(boardId, userId)] });
    sockets
      .on(PostToConnectionCommand)
      .resolvesOnce({})
      .resolvesOnce({})
      .rejectsOnce(Object.assign(new Error('limit'), { name: 'LimitExceededException' }))
      .resolves({});
    const single = cardUpdated(boardId, 1);
    const run = [2, 3, 4].map((seq) => cardUpdated(boardId, seq));
    const records = [logged(single), loggedRun(run)];
    expect(await invoke(records)).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]!.dynamodb.SequenceNumber }] });
    expect(await invoke(records.slice(1))).toEqual({ batchItemFailures: [] });
    // Attempts: 1 and 2 sent, 3 failed; then the run again: 2, 3 and 4 (clients drop the repeat by event_id).
    expect(posted().map((p) => [p.frame.seq, p.frame.event_id])).toEqual([
      [1, single.event_id],
      [2, run[0]!.event_id],
      [3, run[1]!.event_id],
      [2, run[0]!.event_id],
      [3, run[1]!.event_id],
      [4, run[2]!.event_id],
    ]);
  });
});
