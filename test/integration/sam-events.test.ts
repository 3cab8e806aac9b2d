import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { keys } from '../../lib/data/table';
import {
  poolTriggers,
  queueConsumers,
  type RouteId,
  type RouteRow,
  routes,
  type SocketRouteId,
  type SocketRouteRow,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../../lib/routes';
import { eventFileOf, PLACEHOLDER } from '../../scripts/make-events';
import { call, newBoard, newCard, newColumn, newUser, type TestUser } from '../support/api';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import { filledSampleEvent } from '../support/sample-events';
import { closeAllSockets, connect, getTicket } from '../support/sockets';

/**
 * SAM cannot run here (no Docker), so this checks what `sam local invoke -e events/<row>.json`
 * would do: each sample event, with its placeholders filled in, runs through the row's real
 * handler module in this process, against the local stack's DynamoDB, Cognito and WebSocket
 * connections endpoint.
 */
const root = join(__dirname, '..', '..');
const rows = Object.entries(routes) as [RouteId, RouteRow][];
const socketRows = Object.entries(socketRoutes) as [SocketRouteId, SocketRouteRow][];
const everyRowId = [routes, socketRoutes, streamConsumers, queueConsumers, schedules, poolTriggers].flatMap((table) =>
  Object.keys(table),
);
type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type AnyHandler = (event: unknown, context: Context) => Promise<unknown>;

beforeAll(async () => {
  const env = JSON.parse(readFileSync(join(process.env.TASK_BOARD_DATA_DIR!, 'local-env.json'), 'utf8'));
  // The emulator's keys come with the rest, in TOKEN_JWKS, as they reach SAM's containers.
  Object.assign(process.env, env, { LOG_LEVEL: 'SILENT', METRICS_DISABLED: 'true' });
});

afterEach(closeAllSockets);

/** The sample event of a row with its placeholders replaced. */
function sample(rowId: string, values: Partial<Record<keyof typeof PLACEHOLDER, string>>): unknown {
  let text = readFileSync(join(root, 'events', eventFileOf(rowId)), 'utf8');
  for (const [name, value] of Object.entries(values)) {
    text = text.replaceAll(PLACEHOLDER[name as keyof typeof PLACEHOLDER], value);
  }
  return JSON.parse(text);
}

/** The row's own handler module, as its bundle would load it. */
async function handlerOf(entry: string): Promise<AnyHandler> {
  return ((await import(join(root, entry))) as { handler: AnyHandler }).handler;
}

const context = { awsRequestId: 'sample' } as Context;

describe('sample events (events/)', () => {
  it('has exactly one sample event per row of every table (HTTP, WebSocket, stream, queue, schedule, pool trigger)', () => {
    expect(readdirSync(join(root, 'events')).sort()).toEqual(everyRowId.map(eventFileOf).sort());
  });

  it.each(rows)("events/%s runs through its real handler and gets the route's success status", async (routeId, row) => {
    const { text } = await filledSampleEvent(routeId);
    const event = JSON.parse(text) as APIGatewayProxyEventV2;
    const { handler } = (await import(join(root, row.entry))) as { handler: Handler };
    const reply = await handler(event, { awsRequestId: 'sample' } as Context);
    const json = /json/.test(String(reply.headers?.['content-type']));
    expect({ status: reply.statusCode, body: reply.body && json ? JSON.parse(reply.body) : reply.body }).toMatchObject({
      status: row.success.status,
    });
  });
});

describe('live events sample events (events/socket-*, events-broadcast, sockets-sweep)', () => {
  type Reply = { statusCode: number; body?: string };
  const answer = (reply: Reply) => ({
    status: reply.statusCode,
    frame: reply.body === undefined ? undefined : JSON.parse(reply.body),
  });

  /** Runs a socket row's sample event for `connection` (a connection id as API Gateway would give it). */
  const runSocket = async (rowId: SocketRouteId, values: Partial<Record<keyof typeof PLACEHOLDER, string>>) =>
    (await (
      await handlerOf(socketRoutes[rowId].entry)
    )(sample(rowId, values), context)) as Reply;

  /** A connection opened by the $connect sample with a real ticket of `user`. */
  async function openedConnection(user: TestUser): Promise<string> {
    const connection = `sample-${randomUUID()}`;
    const { ticket } = await getTicket(user);
    expect(answer(await runSocket('socket.connect', { ticket, connection }))).toEqual({ status: 200, frame: undefined });
    return connection;
  }

  it('events/socket-connect.json with its placeholder ticket is refused with 401', async () => {
    const reply = await runSocket('socket.connect', { connection: `sample-${randomUUID()}` });
    expect(reply.statusCode).toBe(401);
  });

  const expected: Record<SocketRouteId, (boardId: string) => unknown> = {
    'socket.connect': () => ({ status: 200, frame: undefined }),
    'socket.disconnect': () => ({ status: 200, frame: undefined }),
    // A new board has no change yet: its latest seq is 0.
    'socket.watch': (boardId) => ({ status: 200, frame: { type: 'watch.ack', board_id: boardId, seq: 0 } }),
    'socket.unwatch': (boardId) => ({ status: 200, frame: { type: 'unwatch.ack', board_id: boardId } }),
    'socket.ping': () => ({ status: 200, frame: { type: 'pong' } }),
    'socket.default': () => ({ status: 200, frame: { type: 'error', code: 'bad_request', detail: expect.any(String) } }),
  };

  it.each(socketRows)('events/%s runs through its real handler on a connection a real ticket opened', async (rowId) => {
    const user = await newUser();
    const board = await newBoard(user);
    if (rowId === 'socket.connect') {
      // A real ticket opens the connection, once: used again, it is refused.
      const { ticket } = await getTicket(user);
      const connection = `sample-${randomUUID()}`;
      expect(answer(await runSocket(rowId, { ticket, connection }))).toEqual(expected[rowId](board.id));
      expect((await runSocket(rowId, { ticket, connection: `sample-${randomUUID()}` })).statusCode).toBe(401);
      return;
    }
    const connection = await openedConnection(user);
    if (rowId === 'socket.unwatch') {
      expect(answer(await runSocket('socket.watch', { connection, board: board.id }))).toEqual(
        expected['socket.watch'](board.id),
      );
    }
    expect(answer(await runSocket(rowId, { connection, board: board.id }))).toEqual(expected[rowId](board.id));
    if (rowId === 'socket.disconnect') {
      // The connection is forgotten: a watch on it is refused.
      const after = answer(await runSocket('socket.watch', { connection, board: board.id }));
      expect(after.frame).toMatchObject({ type: 'error', code: 'forbidden', ref: 'watch', board_id: board.id });
    }
  });

  it("events/children-collect.json runs through the cleanup reader: a deleted board's items are removed, a deleted account leaves its boards", async () => {
    // Two users: the board's owner (whose board the sample's board.deleted names) and the account
    // the sample's marker deletes, a member of the owner's other board and owner of one alone.
    const owner = await newUser();
    const user = await newUser();
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    const own = await newBoard(user);
    const shared = await newBoard(owner);
    await call('POST', `/boards/${shared.id}/members`, { token: owner.token, body: { email: user.email } });
    // The board item goes as the request deletes it, but without the event item the stack's own
    // poller would hand to the reader; the marker is written by the sample alone: only the
    // sample's run does either's work. (The request also takes the board's card-id prefix item;
    // it stays here, as after a deletion by a version from before prefixes, for the reader.)
    const ddb = localDocumentClient(localEnv());
    try {
      await ddb.send(new DeleteCommand({ TableName: localEnv().TABLE_NAME!, Key: { pk: `BOARD#${board.id}`, sk: '#BOARD' } }));
      const handler = await handlerOf(streamConsumers['children.collect'].entry);
      const event = sample('children.collect', {
        board: board.id,
        user: user.id,
        teammateEmail: user.email,
        change: randomUUID(),
      });
      expect((event as { Records: unknown[] }).Records).toHaveLength(2);
      expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
      expect(await readPartition(ddb, localEnv().TABLE_NAME!, `BOARD#${board.id}`)).toEqual([]);
      // The board's card-id prefix item went with it: the card's id leads nowhere.
      expect(await readPartition(ddb, localEnv().TABLE_NAME!, keys.cardBoardLookup(card.id).pk)).toEqual([]);
      expect(await readPartition(ddb, localEnv().TABLE_NAME!, `USER#${user.id}`)).toEqual([]);
      expect((await call('GET', `/boards/${own.id}`, { token: user.token })).status).toBe(403);
      const members = await call('GET', `/boards/${shared.id}/members`, { token: owner.token });
      expect(members.body.map((m: { user_id: string }) => m.user_id)).toEqual([owner.id]);
    } finally {
      ddb.destroy();
    }
  });

  it('events/events-broadcast.json runs through the change reader: no batch failures (sockets and webhook fanout), and a watcher gets the card.moved event', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const from = await newColumn(user, board.id);
    const column = await newColumn(user, board.id);
    const card = await newCard(user, from.id);
    const socket = await connect(user, 'watcher');
    // The sample's change is dated before the watch (a fixed time): keep it all the same.
    await socket.watch(board.id, { replayed: true });
    const change = randomUUID();
    const event = sample('events.broadcast', {
      board: board.id,
      column: column.id,
      fromColumn: from.id,
      card: card.id,
      user: user.id,
      change,
    });
    const handler = await handlerOf(streamConsumers['events.broadcast'].entry);
    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    // The card as the REST routes show it (fields the sample's item lacks come with their defaults).
    expect(await socket.nextOfType('card.moved')).toMatchObject({
      type: 'card.moved',
      event_id: change,
      board_id: board.id,
      actor_id: user.id,
      occurred_at: '2026-11-23T10:00:00.000Z',
      card: {
        id: card.id,
        column_id: column.id,
        title: 'Write the README',
        description: 'Quick start first',
        position: 1,
        created_at: '2026-11-23T09:00:00.000Z',
      },
      from_column_id: from.id,
      from_position: 1,
    });
  });

  it.each(Object.keys(queueConsumers))(
    'events/%s runs through the delivery worker: a message whose delivery is not in the table is acknowledged',
    async (rowId) => {
      const user = await newUser();
      const board = await newBoard(user);
      const handler = await handlerOf(queueConsumers[rowId as keyof typeof queueConsumers].entry);
      const event = sample(rowId, { board: board.id, webhook: randomUUID() });
      expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    },
  );

  it('events/sockets-sweep.json runs through the sweeper', async () => {
    const handler = await handlerOf(schedules['sockets.sweep'].entry);
    expect(await handler(sample('sockets.sweep', {}), context)).toEqual({ closed: expect.any(Number) });
  });

  it('events/auth-message.json runs through the mail trigger: the reset subject, the code parameter in the text', async () => {
    const handler = await handlerOf(poolTriggers['auth.message'].entry);
    const { response } = (await handler(sample('auth.message', {}), context)) as { response: Record<string, string> };
    expect(response.emailSubject).toMatch(/reset your .* password/i);
    expect(response.emailMessage).toContain('{####}');
  });
});
