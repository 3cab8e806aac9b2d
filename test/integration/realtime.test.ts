import { createHash, randomBytes } from 'node:crypto';
import { type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { socketLimits } from '../../lib/runtime/aws-limits';
import {
  addMember,
  type CardView,
  type ColumnView,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  type TestUser,
  UUID,
  unknownId,
} from '../support/api';
import { boardSeq } from '../support/event-log';
import { localDocumentClient, localEnv, readPartition } from '../support/local-table';
import {
  closeAllSockets,
  connect,
  type Frame,
  getTicket,
  ISO_MS_UTC,
  openSocket,
  refusedStatus,
  socketAddress,
  type TestSocket,
} from '../support/sockets';
import { eventually } from '../support/wait';

/**
 * Live board events (docs/reference.md, "Live events"), row by row, over the real local stack with a
 * real WebSocket client: tickets and the handshake, watch/unwatch/ping and their errors, every
 * event kind with its exact fields and envelope, who hears what (the actor, other members, a
 * removed member, a socket that unwatched), and the cleanup of sockets that are gone.
 *
 * Absence of a frame is never asserted by sleeping alone: after the request that must emit
 * nothing, a real change is made on the same board, whose event (events of one board arrive in
 * order) must then be the next frame.
 */

let documentClient: DynamoDBDocumentClient;
let tableName: string;

beforeAll(() => {
  const env = localEnv();
  tableName = env.TABLE_NAME!;
  documentClient = localDocumentClient(env);
});

afterEach(closeAllSockets);

afterAll(async () => {
  await closeAllSockets();
  documentClient.destroy();
});

// --- helpers -------------------------------------------------------------------------------------

/**
 * The exact event a watcher expects: the envelope plus the kind's own fields, nothing else. Every
 * board event carries `seq` (the test passes the exact one in `fields` where it knows it, from the
 * tree read before the change); `access.revoked` carries none.
 */
const event = (type: string, boardId: string, actor: TestUser, fields: Record<string, unknown> = {}) => ({
  type,
  event_id: expect.stringMatching(UUID),
  board_id: boardId,
  actor_id: actor.id,
  occurred_at: expect.stringMatching(ISO_MS_UTC),
  ...(type === 'access.revoked' ? {} : { seq: expect.any(Number) }),
  ...fields,
});

/** Makes a change, and returns its answer with the time window it was made in. */
async function timed<T>(change: () => Promise<T>): Promise<{ result: T; from: number; to: number }> {
  const from = Date.now();
  const result = await change();
  return { result, from, to: Date.now() };
}

/** occurred_at lies within the request that made the change (same machine, same clock). */
function expectOccurredWithin(frame: Frame, window: { from: number; to: number }) {
  const at = Date.parse(frame.occurred_at as string);
  expect(at).toBeGreaterThanOrEqual(window.from);
  expect(at).toBeLessThanOrEqual(window.to);
}

async function ok<T = any>(status: number, request: Promise<{ status: number; body: T }>): Promise<T> {
  const reply = await request;
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

const patchCard = (user: TestUser, id: string, body: unknown) =>
  call<CardView>('PATCH', `/cards/${id}`, { token: user.token, body });
const moveCard = (user: TestUser, id: string, body: unknown) =>
  call<CardView>('PATCH', `/cards/${id}/move`, { token: user.token, body });
const deleteCard = (user: TestUser, id: string) => call('DELETE', `/cards/${id}`, { token: user.token });
const renameBoard = (user: TestUser, id: string, title: string) =>
  call('PATCH', `/boards/${id}`, { token: user.token, body: { title } });

/** A board of `owner` with `member` added as a member. */
async function sharedBoard() {
  const [owner, member] = await Promise.all([newUser(), newUser()]);
  const board = await newBoard(owner, 'Shared');
  await addMember(owner, board.id, member);
  return { owner, member, board };
}

/** A socket of `user` watching `boardId`. */
async function watching(user: TestUser, boardId: string, label: string): Promise<TestSocket> {
  const socket = await connect(user, label);
  await socket.watch(boardId);
  return socket;
}

const watchItemsOf = async (boardId: string) =>
  (await readPartition(documentClient, tableName, `BOARD#${boardId}`)).filter((item) => String(item.sk).startsWith('#WATCH#'));

// --- tickets -------------------------------------------------------------------------------------

describe('POST /realtime/tickets', () => {
  it('needs a bearer token: 401 problem+json without one', async () => {
    const reply = await call('POST', '/realtime/tickets');
    expectProblem(reply, 401);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const bad = await call('POST', '/realtime/tickets', { token: 'not-a-token' });
    expectProblem(bad, 401);
  });

  it('answers 201 {ticket, url, expires_in: 60} with a ws:// url; every ticket is new', async () => {
    const user = await newUser();
    const reply = await call('POST', '/realtime/tickets', { token: user.token });
    expect(reply.status).toBe(201);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ ticket: expect.any(String), url: expect.stringMatching(/^ws:\/\/[^?#]+$/), expires_in: 60 });
    expect(reply.body.ticket.length).toBeGreaterThanOrEqual(16);
    const again = await getTicket(user);
    expect(again.ticket).not.toBe(reply.body.ticket);
    expect(again.url).toBe(reply.body.url);
  });

  it('serves an AsyncAPI document whose local server is the address tickets name (whatever SOCKET_PORT)', async () => {
    const { url } = await getTicket(await newUser());
    const served = await call('GET', '/asyncapi.json');
    expect(served.status).toBe(200);
    const local = served.body.servers.local;
    expect(`${local.protocol}://${local.host}${local.pathname}`).toBe(url);
    // The AWS server keeps its shape, with its variables, for readers of the local document.
    expect(served.body.servers.production.host).toBe('{apiId}.execute-api.{region}.amazonaws.com');
  });
});

describe('the handshake', () => {
  it('opens a socket with a ticket once: a second handshake with the same ticket is refused with 401', async () => {
    const user = await newUser();
    const ticket = await getTicket(user);
    const socket = await openSocket(socketAddress(ticket), 'first');
    await socket.ping();
    expect(await refusedStatus(socketAddress(ticket))).toBe(401);
    // The first socket is unaffected.
    await socket.ping();
  });

  it('refuses an unknown ticket with 401', async () => {
    const { url } = await getTicket(await newUser());
    expect(await refusedStatus(socketAddress({ url, ticket: randomBytes(32).toString('base64url') }))).toBe(401);
    expect(await refusedStatus(socketAddress({ url, ticket: 'garbage' }))).toBe(401);
  });

  it('refuses a missing or empty ticket with 401', async () => {
    const { url } = await getTicket(await newUser());
    expect(await refusedStatus(url)).toBe(401);
    expect(await refusedStatus(`${url}?ticket=`)).toBe(401);
  });

  it('refuses an over-long (unknown) ticket with 401', async () => {
    const { url } = await getTicket(await newUser());
    expect(await refusedStatus(socketAddress({ url, ticket: 'x'.repeat(200) }))).toBe(401);
  });

  it('refuses an expired ticket with 401 (its 60 s lifetime moved into the past in the table)', async () => {
    const user = await newUser();
    const before = Math.floor(Date.now() / 1000);
    const ticket = await getTicket(user);
    const after = Math.floor(Date.now() / 1000);
    // A ticket is stored by the hash of its value (lib/data/sockets.ts); it lives 60 s.
    const key = { pk: `TICKET#${createHash('sha256').update(ticket.ticket).digest('base64url')}`, sk: '#TICKET' };
    const updated = await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET expires_at = :past',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':past': before - 1 },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    // It was issued for 60 s.
    const expiresAt = updated.Attributes!.expires_at as number;
    expect(expiresAt).toBeGreaterThanOrEqual(before + 60);
    expect(expiresAt).toBeLessThanOrEqual(after + 60);
    expect(await refusedStatus(socketAddress(ticket))).toBe(401);
  });
});

// --- client → server -----------------------------------------------------------------------------

describe('watch, unwatch and ping', () => {
  it('acks a watch, acks watching the same board again, and answers ping with pong', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const socket = await connect(user);
    // A board with no change yet: seq 0.
    expect(await socket.watchReply(board.id)).toEqual({ type: 'watch.ack', board_id: board.id, seq: 0 });
    expect(await socket.watchReply(board.id)).toEqual({ type: 'watch.ack', board_id: board.id, seq: 0 });
    const pong = await socket.request({ action: 'ping' }, () => true, 'pong');
    expect(pong).toEqual({ type: 'pong' });
    expect(await socket.request({ action: 'unwatch', board_id: board.id }, () => true, 'unwatch.ack')).toEqual({
      type: 'unwatch.ack',
      board_id: board.id,
    });
    // Unwatching a board not watched is acked too.
    const other = unknownId();
    expect(await socket.request({ action: 'unwatch', board_id: other }, () => true, 'unwatch.ack')).toEqual({
      type: 'unwatch.ack',
      board_id: other,
    });
    expect(socket.unread()).toEqual([]);
  });

  it('refuses to watch a board of others, and a board that does not exist, as forbidden', async () => {
    const [owner, stranger] = await Promise.all([newUser(), newUser()]);
    const board = await newBoard(owner);
    const socket = await connect(stranger);
    expect(await socket.watchReply(board.id)).toEqual({
      type: 'error',
      code: 'forbidden',
      ref: 'watch',
      board_id: board.id,
      detail: expect.any(String),
    });
    const missing = unknownId();
    expect(await socket.watchReply(missing)).toEqual({
      type: 'error',
      code: 'forbidden',
      ref: 'watch',
      board_id: missing,
      detail: expect.any(String),
    });
    await socket.ping();
  });

  it('hears nothing of a board whose watch was refused', async () => {
    const [owner, stranger] = await Promise.all([newUser(), newUser()]);
    const theirs = await newBoard(owner);
    const mine = await newBoard(stranger);
    const socket = await connect(stranger);
    expect((await socket.watchReply(theirs.id)).code).toBe('forbidden');
    await socket.watch(mine.id);
    await ok(200, renameBoard(owner, theirs.id, 'Secret'));
    const spy = await watching(owner, theirs.id, 'owner');
    await ok(200, renameBoard(owner, theirs.id, 'Secret 2'));
    await spy.waitFor((f) => f.type === 'board.updated', 'board.updated on their board');
    await ok(200, renameBoard(stranger, mine.id, 'Mine'));
    const next = await socket.next();
    expect(next).toMatchObject({ type: 'board.updated', board_id: mine.id });
    expect(socket.received.filter((f) => f.board_id === theirs.id && f.type !== 'error')).toEqual([]);
  });

  it('answers a board_id that is not a UUID, or none, with bad_request', async () => {
    const user = await newUser();
    const socket = await connect(user);
    const notUuid = await socket.request({ action: 'watch', board_id: 'board-1' }, () => true, 'error');
    expect(notUuid).toMatchObject({ type: 'error', code: 'bad_request', detail: expect.any(String) });
    const missing = await socket.request({ action: 'watch' }, () => true, 'error');
    expect(missing).toMatchObject({ type: 'error', code: 'bad_request', detail: expect.any(String) });
    const unwatch = await socket.request({ action: 'unwatch', board_id: 42 }, () => true, 'error');
    expect(unwatch).toMatchObject({ type: 'error', code: 'bad_request', detail: expect.any(String) });
    await socket.ping();
  });

  it('answers malformed and unknown messages with a bad_request error, and the socket stays usable', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const socket = await connect(user);
    const messages = [
      '{"action": "ping"',
      'not json at all',
      '',
      '[1, 2]',
      '"ping"',
      '42',
      'null',
      '{}',
      '{"board_id": "00000000-0000-4000-8000-000000000000"}',
      '{"action": "subscribe", "board_id": "00000000-0000-4000-8000-000000000000"}',
      '{"action": 7}',
      '{"action": "$connect"}',
      '{"action": "$disconnect"}',
      '{"action": "$default"}',
    ];
    for (const message of messages) {
      const answer = await socket.request(message, () => true, `the answer to ${JSON.stringify(message)}`);
      expect({ message, answer }).toEqual({
        message,
        answer: { type: 'error', code: 'bad_request', detail: expect.any(String) },
      });
      expect((answer.detail as string).length).toBeGreaterThan(0);
    }
    expect(socket.isOpen).toBe(true);
    await socket.ping();
    await socket.watch(board.id);
    await ok(200, renameBoard(user, board.id, 'Still heard'));
    expect((await socket.next()).type).toBe('board.updated');
  });

  it.each([
    [
      'a message over 128 KB',
      1009,
      () => Buffer.from(JSON.stringify({ action: 'ping', pad: 'x'.repeat(socketLimits.messageBytes) })),
    ],
    ['a text frame that is not UTF-8', 1007, () => Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
  ])('closes the socket that sent %s (%i), and only that one: the others still hear', async (_case, code, bytes) => {
    const user = await newUser();
    const board = await newBoard(user);
    const [offender, bystander] = await Promise.all([connect(user, 'offender'), watching(user, board.id, 'bystander')]);
    offender.sendBytes(bytes());
    expect((await offender.closed()).code).toBe(code);
    await bystander.ping();
    await ok(200, renameBoard(user, board.id, 'Still heard'));
    expect((await bystander.next()).type).toBe('board.updated');
    expect((await connect(user, 'newcomer')).isOpen).toBe(true);
  });

  it('watches at most 20 boards: a re-watch counts once, the 21st is refused with limit, an unwatch frees a slot', async () => {
    const user = await newUser();
    const boards = await Promise.all(Array.from({ length: 21 }, (_, i) => newBoard(user, `Board ${i + 1}`)));
    const socket = await connect(user);
    for (const board of boards.slice(0, 20)) await socket.watch(board.id);
    // Watching one of the 20 again is acked and takes no slot.
    expect(await socket.watchReply(boards[5]!.id)).toEqual({ type: 'watch.ack', board_id: boards[5]!.id, seq: 0 });
    const extra = boards[20]!;
    expect(await socket.watchReply(extra.id)).toEqual({
      type: 'error',
      code: 'limit',
      ref: 'watch',
      board_id: extra.id,
      detail: expect.any(String),
    });
    // The refused board is not watched: its change is not heard; a watched board's next one is.
    await ok(200, renameBoard(user, extra.id, 'Not heard'));
    await ok(200, renameBoard(user, boards[0]!.id, 'Heard'));
    const heard = await socket.waitFor((f) => f.type === 'board.updated', 'board.updated');
    expect(heard.board_id).toBe(boards[0]!.id);
    // An unwatch frees a slot.
    await socket.unwatch(boards[3]!.id);
    // Its one change so far (the rename no one heard) is seq 1.
    expect(await socket.watchReply(extra.id)).toEqual({ type: 'watch.ack', board_id: extra.id, seq: 1 });
    expect(await socket.watchReply(boards[3]!.id)).toMatchObject({ type: 'error', code: 'limit', board_id: boards[3]!.id });
    expect(socket.received.filter((f) => f.type === 'board.updated' && f.board_id === extra.id)).toEqual([]);
  });
});

// --- server → client events ----------------------------------------------------------------------

describe('card events', () => {
  it('sends card.created, card.updated, card.moved and card.deleted of one card in order, with exact fields', async () => {
    const { owner, member, board } = await sharedBoard();
    const todo = await newColumn(owner, board.id, 'To do');
    const done = await newColumn(owner, board.id, 'Done');
    const other = await newCard(owner, done.id, { title: 'Already done' });
    const socket = await watching(owner, board.id, 'owner');
    const seq = await boardSeq(owner, board.id);

    const created = await timed(() =>
      ok<CardView>(
        201,
        call('POST', `/columns/${todo.id}/cards`, { token: member.token, body: { title: 'Write', description: 'tests' } }),
      ),
    );
    const updated = await timed(() => ok<CardView>(200, patchCard(member, created.result.id, { title: 'Write more' })));
    const moved = await timed(() =>
      ok<CardView>(200, moveCard(member, created.result.id, { target_column_id: done.id, before_id: other.id })),
    );
    const deleted = await timed(() => ok(204, deleteCard(member, created.result.id)));

    const frames = [await socket.next(), await socket.next(), await socket.next(), await socket.next()];
    expect(frames).toEqual([
      event('card.created', board.id, member, { card: created.result, seq: seq + 1 }),
      event('card.updated', board.id, member, { card: updated.result, seq: seq + 2 }),
      event('card.moved', board.id, member, {
        card: moved.result,
        from_column_id: todo.id,
        from_position: created.result.position,
        seq: seq + 3,
      }),
      event('card.deleted', board.id, member, { card_id: created.result.id, column_id: done.id, seq: seq + 4 }),
    ]);
    expect(moved.result).toMatchObject({ column_id: done.id, title: 'Write more', description: 'tests' });
    expectOccurredWithin(frames[0]!, created);
    expectOccurredWithin(frames[1]!, updated);
    expectOccurredWithin(frames[2]!, moved);
    expectOccurredWithin(frames[3]!, deleted);
    expect(new Set(frames.map((f) => f.event_id)).size).toBe(4);
    await socket.expectNoFrame(300);
  });

  it('sends card.updated for a description change and card.moved within a column', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const first = await newCard(user, column.id, { title: 'First' });
    const second = await newCard(user, column.id, { title: 'Second' });
    const socket = await watching(user, board.id, 'owner');
    const seq = await boardSeq(user, board.id);
    const described = await ok<CardView>(200, patchCard(user, first.id, { description: 'Now described' }));
    const moved = await ok<CardView>(200, moveCard(user, second.id, { target_column_id: column.id, after_id: first.id }));
    expect(await socket.next()).toEqual(event('card.updated', board.id, user, { card: described, seq: seq + 1 }));
    expect(await socket.next()).toEqual(
      event('card.moved', board.id, user, {
        card: moved,
        from_column_id: column.id,
        from_position: second.position,
        seq: seq + 2,
      }),
    );
    expect(moved.position).toBeLessThan(first.position);
  });
});

describe('card.moved under concurrent moves of one card', () => {
  it('names as from_* where each move found the card: the events chain from its first place to its last', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const columns = await Promise.all(['X', 'Y', 'Z'].map((title) => newColumn(user, board.id, title)));
    const card = await newCard(user, columns[0]!.id, { title: 'Contended' });
    const socket = await watching(user, board.id, 'owner');

    const targets = [1, 2, 0, 1, 2, 0, 1, 2];
    const replies = await Promise.all(targets.map((i) => moveCard(user, card.id, { target_column_id: columns[i]!.id })));
    expect(replies.map((reply) => reply.status)).toEqual(targets.map(() => 200));

    // A move that found the card where it was headed wrote nothing and sent nothing; the rename
    // after them all marks the end (events of one board arrive in order).
    await ok(200, renameBoard(user, board.id, 'Done moving'));
    const moves: Frame[] = [];
    for (let frame = await socket.next(); frame.type !== 'board.updated'; frame = await socket.next()) moves.push(frame);
    expect(moves.length).toBeGreaterThan(0);
    let place = { column_id: card.column_id, position: card.position };
    for (const frame of moves) {
      expect(frame).toMatchObject({ type: 'card.moved', from_column_id: place.column_id, from_position: place.position });
      const moved = frame.card as CardView;
      expect({ column_id: moved.column_id, position: moved.position }).not.toEqual(place);
      place = { column_id: moved.column_id, position: moved.position };
    }
    const stored = await ok<CardView>(200, call('GET', `/cards/${card.id}`, { token: user.token }));
    expect({ column_id: stored.column_id, position: stored.position }).toEqual(place);
  });
});

describe('card.deleted under a racing move', () => {
  it("names the column the card left, also when a move of it commits between the delete's read and its write", async () => {
    const user = await newUser();
    const board = await newBoard(user);
    // One race in about eighteen lands in the window: 64 cards make a run without the fix fail
    // all but certainly. Four columns of 16, built column by column in parallel.
    const [to, ...from] = await Promise.all(['To', 'A', 'B', 'C', 'D'].map((title) => newColumn(user, board.id, title)));
    const cards = (
      await Promise.all(
        from.map(async (column) => {
          const made: CardView[] = [];
          for (let i = 0; i < 16; i++) made.push(await newCard(user, column!.id, { title: `Raced ${i}` }));
          return made;
        }),
      )
    ).flat();
    const socket = await watching(user, board.id, 'owner');

    // Each card is moved and deleted at once; either may land first. A move that lost to the
    // delete is a 404, a delete never is. Eight cards at a time: the races are per card, and a
    // busy machine need not hold 128 requests at once.
    for (let i = 0; i < cards.length; i += 8) {
      const replies = await Promise.all(
        cards
          .slice(i, i + 8)
          .flatMap((card) => [moveCard(user, card.id, { target_column_id: to!.id }), deleteCard(user, card.id)]),
      );
      for (const [j, reply] of replies.entries()) expect(j % 2 === 0 ? [200, 404] : [204]).toContain(reply.status);
    }

    await ok(200, renameBoard(user, board.id, 'Done racing'));
    const column = new Map(cards.map((card) => [card.id, card.column_id]));
    const deleted: string[] = [];
    for (let frame = await socket.next(); frame.type !== 'board.updated'; frame = await socket.next()) {
      if (frame.type === 'card.moved') column.set((frame.card as CardView).id, (frame.card as CardView).column_id);
      else {
        expect(frame).toMatchObject({ type: 'card.deleted', column_id: column.get(frame.card_id as string) });
        deleted.push(frame.card_id as string);
      }
    }
    expect(deleted.sort()).toEqual(cards.map((card) => card.id).sort());
  });
});

describe('column events', () => {
  it('sends column.created, column.updated and column.moved with the column as the REST answer has it (no cards)', async () => {
    const { owner, member, board } = await sharedBoard();
    const first = await newColumn(owner, board.id, 'First');
    const socket = await watching(owner, board.id, 'owner');
    const seq = await boardSeq(owner, board.id);
    const created = await ok<ColumnView>(
      201,
      call('POST', `/boards/${board.id}/columns`, { token: member.token, body: { title: 'Second' } }),
    );
    const renamed = await ok<ColumnView>(
      200,
      call('PATCH', `/columns/${created.id}`, { token: member.token, body: { title: 'Renamed' } }),
    );
    const moved = await ok<ColumnView>(
      200,
      call('PATCH', `/columns/${created.id}/move`, { token: member.token, body: { after_id: first.id } }),
    );
    expect(Object.keys(created).sort()).toEqual(['board_id', 'id', 'position', 'title']);
    expect(await socket.next()).toEqual(event('column.created', board.id, member, { column: created, seq: seq + 1 }));
    expect(await socket.next()).toEqual(event('column.updated', board.id, member, { column: renamed, seq: seq + 2 }));
    expect(await socket.next()).toEqual(event('column.moved', board.id, member, { column: moved, seq: seq + 3 }));
    expect(moved.position).toBeLessThan(first.position);
  });

  it('sends column.deleted with column_id and no card.deleted for its cards', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const column = await newColumn(user, board.id, 'Doomed');
    await newCard(user, column.id, { title: 'one' });
    await newCard(user, column.id, { title: 'two' });
    const socket = await watching(user, board.id, 'owner');
    const seq = await boardSeq(user, board.id);
    await ok(204, call('DELETE', `/columns/${column.id}`, { token: user.token }));
    await ok(200, renameBoard(user, board.id, 'After the column'));
    expect(await socket.next()).toEqual(event('column.deleted', board.id, user, { column_id: column.id, seq: seq + 1 }));
    // The deletion of its cards takes no seq of its own.
    expect(await socket.next()).toMatchObject({ type: 'board.updated', board_id: board.id, seq: seq + 2 });
  });
});

describe('board events', () => {
  it('sends board.updated with the board as PATCH answered it', async () => {
    const { owner, member, board } = await sharedBoard();
    const socket = await watching(owner, board.id, 'owner');
    const seq = await boardSeq(owner, board.id);
    const renamed = await ok(200, renameBoard(member, board.id, 'Renamed by a member'));
    expect(renamed).toEqual({ ...board, title: 'Renamed by a member' });
    expect(await socket.next()).toEqual(event('board.updated', board.id, member, { board: renamed, seq: seq + 1 }));
  });

  it('sends board.deleted (the envelope only) to every watcher, then drops the watches', async () => {
    const { owner, member, board } = await sharedBoard();
    const column = await newColumn(owner, board.id);
    await newCard(owner, column.id);
    const ownerSocket = await watching(owner, board.id, 'owner');
    const memberSocket = await watching(member, board.id, 'member');
    const seq = await boardSeq(owner, board.id);
    const deleted = await timed(() => ok(204, call('DELETE', `/boards/${board.id}`, { token: owner.token })));
    const expected = event('board.deleted', board.id, owner, { seq: seq + 1 });
    const [toOwner, toMember] = [await ownerSocket.next(), await memberSocket.next()];
    expect(toOwner).toEqual(expected);
    expect(toMember).toEqual(expected);
    expect(toMember.event_id).toBe(toOwner.event_id);
    expectOccurredWithin(toOwner, deleted);

    // The watches of the board are gone, and the sockets work on.
    await eventually(async () => expect(await watchItemsOf(board.id)).toEqual([]));
    expect(await ownerSocket.watchReply(board.id)).toMatchObject({ type: 'error', code: 'forbidden', board_id: board.id });
    const next = await newBoard(owner, 'Next');
    await ownerSocket.watch(next.id);
    await ok(200, renameBoard(owner, next.id, 'Next, renamed'));
    expect(await ownerSocket.next()).toMatchObject({ type: 'board.updated', board_id: next.id });
    await memberSocket.ping();
    expect(ownerSocket.unread()).toEqual([]);
    expect(memberSocket.unread()).toEqual([]);
  });
});

describe('label events', () => {
  it('sends label.created, label.updated and label.deleted, and card.updated when a card’s labels change', async () => {
    const { owner, member, board } = await sharedBoard();
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id);
    const socket = await watching(owner, board.id, 'owner');
    const seq = await boardSeq(owner, board.id);
    const label = await ok(
      201,
      call('POST', `/boards/${board.id}/labels`, { token: member.token, body: { name: 'Bug', color: '#D73A4A' } }),
    );
    expect(await socket.next()).toEqual(event('label.created', board.id, member, { label, seq: seq + 1 }));
    const attached = await ok(200, call('PUT', `/cards/${card.id}/labels/${label.id}`, { token: member.token }));
    expect(attached.label_ids).toEqual([label.id]);
    expect(await socket.next()).toEqual(event('card.updated', board.id, member, { card: attached, seq: seq + 2 }));
    // Attaching it again changes nothing, so it emits nothing and takes no seq: the next frame is the rename.
    await ok(200, call('PUT', `/cards/${card.id}/labels/${label.id}`, { token: member.token }));
    const renamed = await ok(200, call('PATCH', `/labels/${label.id}`, { token: owner.token, body: { name: 'Defect' } }));
    expect(await socket.next()).toEqual(event('label.updated', board.id, owner, { label: renamed, seq: seq + 3 }));
    await ok(204, call('DELETE', `/labels/${label.id}`, { token: owner.token }));
    // The cards that carried it need no card.updated: clients drop the label on label.deleted.
    expect(await socket.next()).toEqual(event('label.deleted', board.id, owner, { label_id: label.id, seq: seq + 4 }));
    await ok(200, renameBoard(owner, board.id, 'After the label'));
    expect(await socket.next()).toMatchObject({ type: 'board.updated', seq: seq + 5 });
    expect(socket.unread()).toEqual([]);
  });
});

describe("a card's labels in its events", () => {
  it('are those the REST answer shows: in label order (name, case-insensitively), a deleted label left out', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const card = await newCard(user, column.id);
    const label = (name: string) =>
      ok<{ id: string }>(
        201,
        call('POST', `/boards/${board.id}/labels`, { token: user.token, body: { name, color: '#0e8a16' } }),
      );
    const zebra = await label('zebra');
    const apple = await label('Apple');
    const socket = await watching(user, board.id, 'owner');
    const seq = await boardSeq(user, board.id);
    await ok(200, call('PUT', `/cards/${card.id}/labels/${zebra.id}`, { token: user.token }));
    const both = await ok<CardView & { label_ids: string[] }>(
      200,
      call('PUT', `/cards/${card.id}/labels/${apple.id}`, { token: user.token }),
    );
    expect(both.label_ids).toEqual([apple.id, zebra.id]);
    await ok(204, call('DELETE', `/labels/${zebra.id}`, { token: user.token }));
    const edited = (await ok<CardView>(200, patchCard(user, card.id, { title: 'After the label' }))) as CardView & {
      label_ids: string[];
    };
    expect(edited.label_ids).toEqual([apple.id]);
    expect(await socket.next()).toMatchObject({ type: 'card.updated', seq: seq + 1 });
    expect(await socket.next()).toEqual(event('card.updated', board.id, user, { card: both, seq: seq + 2 }));
    expect(await socket.next()).toEqual(event('label.deleted', board.id, user, { label_id: zebra.id, seq: seq + 3 }));
    expect(await socket.next()).toEqual(event('card.updated', board.id, user, { card: edited, seq: seq + 4 }));
  });
});

describe('member events', () => {
  it('sends member.added, member.updated and member.removed with the member view the REST routes return', async () => {
    const { owner, member, board } = await sharedBoard();
    const newcomer = await newUser();
    const ownerSocket = await watching(owner, board.id, 'owner');
    const memberSocket = await watching(member, board.id, 'member');
    const seq = await boardSeq(owner, board.id);

    const added = await ok(
      201,
      call('POST', `/boards/${board.id}/members`, { token: owner.token, body: { email: newcomer.email } }),
    );
    const promoted = await ok(
      200,
      call('PATCH', `/boards/${board.id}/members/${newcomer.id}`, { token: owner.token, body: { role: 'owner' } }),
    );
    await ok(204, call('DELETE', `/boards/${board.id}/members/${newcomer.id}`, { token: owner.token }));
    expect(added).toMatchObject({ user_id: newcomer.id, role: 'member' });
    expect(promoted).toMatchObject({ user_id: newcomer.id, role: 'owner' });

    for (const socket of [ownerSocket, memberSocket]) {
      expect(await socket.next()).toEqual(event('member.added', board.id, owner, { member: added, seq: seq + 1 }));
      expect(await socket.next()).toEqual(event('member.updated', board.id, owner, { member: promoted, seq: seq + 2 }));
      expect(await socket.next()).toEqual(event('member.removed', board.id, owner, { user_id: newcomer.id, seq: seq + 3 }));
    }
  });

  it("tells a removed member's socket access.revoked (by the owner) and nothing after; the others get member.removed", async () => {
    const { owner, member, board } = await sharedBoard();
    const third = await newUser();
    await addMember(owner, board.id, third);
    const ownerSocket = await watching(owner, board.id, 'owner');
    const removedSocket = await watching(member, board.id, 'removed member');
    const thirdSocket = await watching(third, board.id, 'third');
    const seq = await boardSeq(owner, board.id);

    await ok(204, call('DELETE', `/boards/${board.id}/members/${member.id}`, { token: owner.token }));
    const revoked = await removedSocket.next();
    // The envelope of the removal, without its seq: access.revoked is addressed to one recipient.
    expect(revoked).toEqual(event('access.revoked', board.id, owner));
    for (const socket of [ownerSocket, thirdSocket]) {
      expect(await socket.next()).toEqual(event('member.removed', board.id, owner, { user_id: member.id, seq: seq + 1 }));
    }

    // Later changes reach the others but not the removed member.
    const column = await newColumn(owner, board.id);
    await ok(200, renameBoard(third, board.id, 'Without them'));
    expect(await ownerSocket.next()).toMatchObject({ type: 'column.created', board_id: board.id });
    expect(await ownerSocket.next()).toMatchObject({ type: 'board.updated', board_id: board.id });
    expect(await thirdSocket.next()).toMatchObject({ type: 'column.created', column: { id: column.id } });
    expect(await thirdSocket.next()).toMatchObject({ type: 'board.updated' });
    await removedSocket.expectNoFrame(500);
    expect(removedSocket.received).toEqual([{ type: 'watch.ack', board_id: board.id, seq }, revoked]);
    // The watch ended: the socket is still open, and may not watch the board again.
    expect(await removedSocket.watchReply(board.id)).toMatchObject({ type: 'error', code: 'forbidden' });
    await eventually(async () =>
      expect((await watchItemsOf(board.id)).map((item) => item.user_id).sort()).toEqual([owner.id, third.id].sort()),
    );
  });

  it('names the remover in access.revoked even while other members’ changes are being broadcast', async () => {
    // A removal that lands while another member's changes are still on their way to the
    // watchers: the removed member's access.revoked must still name the owner who removed them
    // (and nothing reaches them after it). Three rounds, because the timing varies.
    for (let round = 1; round <= 3; round++) {
      const { owner, member, board } = await sharedBoard();
      const editor = await newUser();
      await addMember(owner, board.id, editor);
      const column = await newColumn(owner, board.id);
      const card = await newCard(owner, column.id);
      const ownerSocket = await watching(owner, board.id, `owner (round ${round})`);
      const removedSocket = await watching(member, board.id, `removed member (round ${round})`);
      const replies = await Promise.all([
        patchCard(editor, card.id, { title: 'Edit 1' }),
        patchCard(editor, card.id, { description: 'Edit 2' }),
        new Promise((resolve) => setTimeout(resolve, 15)).then(() =>
          call('DELETE', `/boards/${board.id}/members/${member.id}`, { token: owner.token }),
        ),
      ]);
      expect(replies.map((reply) => reply.status)).toEqual([200, 200, 204]);
      const revoked = await removedSocket.waitFor((f) => f.type === 'access.revoked', 'access.revoked');
      expect({ round, revoked }).toEqual({ round, revoked: event('access.revoked', board.id, owner) });
      // Before it, at most the edits committed before the removal; nothing after it: the
      // owner's next change is heard by the owner only.
      const heard = removedSocket.received.length;
      expect(removedSocket.received.at(-1)).toEqual(revoked);
      expect(removedSocket.received.slice(1, -1).every((frame) => frame.type === 'card.updated')).toBe(true);
      await ok(200, renameBoard(owner, board.id, `Round ${round}`));
      await ownerSocket.waitFor((f) => f.type === 'board.updated', 'board.updated');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(removedSocket.received).toHaveLength(heard);
      await closeAllSockets();
    }
  });

  it('tells a member who leaves access.revoked with themselves as the actor', async () => {
    const { owner, member, board } = await sharedBoard();
    const ownerSocket = await watching(owner, board.id, 'owner');
    const leaverSocket = await watching(member, board.id, 'leaver');
    const seq = await boardSeq(owner, board.id);
    await ok(204, call('DELETE', `/boards/${board.id}/members/${member.id}`, { token: member.token }));
    expect(await leaverSocket.next()).toEqual(event('access.revoked', board.id, member));
    expect(await ownerSocket.next()).toEqual(event('member.removed', board.id, member, { user_id: member.id, seq: seq + 1 }));
    await ok(200, renameBoard(owner, board.id, 'After they left'));
    expect(await ownerSocket.next()).toMatchObject({ type: 'board.updated' });
    await leaverSocket.expectNoFrame(500);
  });
});

describe('who hears a change', () => {
  it("reaches the actor's own sockets and other members' sockets, each event once with one event_id", async () => {
    const { owner, member, board } = await sharedBoard();
    const column = await newColumn(owner, board.id);
    const actorA = await watching(member, board.id, 'actor socket A');
    const actorB = await watching(member, board.id, 'actor socket B');
    const other = await watching(owner, board.id, 'owner socket');
    const seq = await boardSeq(owner, board.id);
    const card = await newCard(member, column.id, { title: 'Mine' });
    const frames = [await actorA.next(), await actorB.next(), await other.next()];
    for (const frame of frames) expect(frame).toEqual(event('card.created', board.id, member, { card, seq: seq + 1 }));
    expect(new Set(frames.map((f) => f.event_id)).size).toBe(1);
    await ok(200, renameBoard(owner, board.id, 'Sentinel'));
    for (const socket of [actorA, actorB, other]) {
      expect(await socket.next()).toMatchObject({ type: 'board.updated' });
      expect(socket.unread()).toEqual([]);
    }
  });

  it('gives every change its own event_id', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const socket = await watching(user, board.id, 'owner');
    const card = await newCard(user, column.id, { title: 'same' });
    await ok(200, patchCard(user, card.id, { title: 'same 2' }));
    await ok(200, patchCard(user, card.id, { title: 'same 3' }));
    await ok(200, renameBoard(user, board.id, 'x'));
    await ok(200, renameBoard(user, board.id, 'y'));
    const frames = [];
    for (let i = 0; i < 5; i++) frames.push(await socket.next());
    expect(frames.map((f) => f.type)).toEqual(['card.created', 'card.updated', 'card.updated', 'board.updated', 'board.updated']);
    expect(new Set(frames.map((f) => f.event_id)).size).toBe(5);
  });

  it('sends nothing for failed requests or requests that change nothing', async () => {
    const { owner, member, board } = await sharedBoard();
    const stranger = await newUser();
    const column = await newColumn(owner, board.id);
    const card = await newCard(owner, column.id, { title: 'Stays' });
    const socket = await watching(owner, board.id, 'owner');
    const seq = await boardSeq(owner, board.id);

    // One after another: concurrent writes to one board could meet contention (503) instead.
    const failures: [string, () => Promise<{ status: number }>, number][] = [
      ['400 empty title', () => patchCard(owner, card.id, { title: '' }), 400],
      ['403 stranger edits', () => patchCard(stranger, card.id, { title: 'Hijacked' }), 403],
      ['403 stranger renames', () => renameBoard(stranger, board.id, 'Hijacked'), 403],
      ['403 member deletes the board', () => call('DELETE', `/boards/${board.id}`, { token: member.token }), 403],
      ['404 move to an unknown column', () => moveCard(owner, card.id, { target_column_id: unknownId() }), 404],
      ['404 unknown before_id', () => moveCard(owner, card.id, { target_column_id: column.id, before_id: unknownId() }), 404],
      [
        '404 change an unknown member',
        () => call('PATCH', `/boards/${board.id}/members/${unknownId()}`, { token: owner.token, body: { role: 'owner' } }),
        404,
      ],
      [
        '409 add a member twice',
        () => call('POST', `/boards/${board.id}/members`, { token: owner.token, body: { email: member.email } }),
        409,
      ],
      ['409 last owner leaves', () => call('DELETE', `/boards/${board.id}/members/${owner.id}`, { token: owner.token }), 409],
    ];
    for (const [what, request, status] of failures) expect({ what, status: (await request()).status }).toEqual({ what, status });
    // Requests that change nothing: an empty PATCH, a PATCH of nulls, a role set to the role the
    // member has, a move of the column's only card to where it is (no neighbours: position 1.0).
    expect((await patchCard(owner, card.id, {})).status).toBe(200);
    expect(await ok(200, moveCard(owner, card.id, { target_column_id: column.id }))).toEqual(card);
    expect((await patchCard(owner, card.id, { title: null, description: null })).status).toBe(200);
    expect(
      (await call('PATCH', `/boards/${board.id}/members/${member.id}`, { token: owner.token, body: { role: 'member' } })).status,
    ).toBe(200);

    const sentinel = await ok(200, renameBoard(owner, board.id, 'The only change'));
    // None of them took a seq: the sentinel's is the next one after the tree's.
    expect(await socket.next()).toEqual(event('board.updated', board.id, owner, { board: sentinel, seq: seq + 1 }));
    await socket.expectNoFrame(300);
  });

  it('stops sending to a socket after unwatch (unwatch.ack first)', async () => {
    const user = await newUser();
    const [left, kept] = await Promise.all([newBoard(user, 'Left'), newBoard(user, 'Kept')]);
    const socket = await connect(user, 'unwatching');
    await socket.watch(left.id);
    await socket.watch(kept.id);
    const witness = await watching(user, left.id, 'witness');
    expect(await socket.request({ action: 'unwatch', board_id: left.id }, () => true, 'unwatch.ack')).toEqual({
      type: 'unwatch.ack',
      board_id: left.id,
    });
    await ok(200, renameBoard(user, left.id, 'Unheard'));
    // The witness still watching the board hears it; then a change of the kept board is the
    // unwatching socket's next frame.
    expect(await witness.next()).toMatchObject({ type: 'board.updated', board_id: left.id });
    await ok(200, renameBoard(user, kept.id, 'Heard'));
    expect(await socket.next()).toMatchObject({ type: 'board.updated', board_id: kept.id });
    await socket.expectNoFrame(300);
    expect(socket.received.filter((f) => f.board_id === left.id && f.type !== 'watch.ack' && f.type !== 'unwatch.ack')).toEqual(
      [],
    );
    await eventually(async () => expect((await watchItemsOf(left.id)).length).toBe(1));
  });
});

describe('sockets that are gone', () => {
  it('forgets a socket that closed without a word (its watch goes with $disconnect)', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const socket = await watching(user, board.id, 'vanishing');
    expect(await watchItemsOf(board.id)).toHaveLength(1);
    await socket.terminate();
    await eventually(async () => expect(await watchItemsOf(board.id)).toEqual([]));
    // Changes go on being accepted and heard by the others.
    const other = await watching(user, board.id, 'other');
    await ok(200, renameBoard(user, board.id, 'Still fine'));
    expect(await other.next()).toMatchObject({ type: 'board.updated' });
  });

  it('cleans up a watch whose socket API Gateway no longer has (GoneException), while the others still hear', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const real = await watching(user, board.id, 'real');
    const seq = await boardSeq(user, board.id);
    // A socket that vanished without $disconnect: its items are still in the table, but the
    // emulator (like API Gateway) answers 410 for its id. API Gateway ids have '+' and '/'.
    const connectionId = `+/${randomBytes(10).toString('base64').slice(0, 13)}=`;
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const ttl = expiresAt + 3600;
    const minute = Math.floor(expiresAt / 60);
    const items = [
      {
        pk: `CONNECTION#${connectionId}`,
        sk: '#CONNECTION',
        type: 'connection',
        connection_id: connectionId,
        user_id: user.id,
        expires_at: expiresAt,
        connected_at: new Date().toISOString(),
        watching: new Set([board.id]),
        ttl,
      },
      {
        pk: `EXPIRES#${minute}`,
        sk: `CONNECTION#${connectionId}`,
        type: 'connection_expiry',
        connection_id: connectionId,
        expires_at: expiresAt,
        ttl,
      },
      {
        pk: `BOARD#${board.id}`,
        sk: `#WATCH#${connectionId}`,
        type: 'watch',
        board_id: board.id,
        connection_id: connectionId,
        user_id: user.id,
        expires_at: expiresAt,
        ttl,
      },
    ];
    for (const Item of items) await documentClient.send(new PutCommand({ TableName: tableName, Item }));
    expect(await watchItemsOf(board.id)).toHaveLength(2);

    const renamed = await ok(200, renameBoard(user, board.id, 'After a vanished client'));
    expect(await real.next()).toEqual(event('board.updated', board.id, user, { board: renamed, seq: seq + 1 }));
    const left = async () =>
      (
        await Promise.all(
          items.map(async ({ pk, sk }) => (await readPartition(documentClient, tableName, pk)).filter((item) => item.sk === sk)),
        )
      ).flat();
    await eventually(async () => expect(await left()).toEqual([]));
    expect((await watchItemsOf(board.id)).map((item) => item.connection_id)).not.toContain(connectionId);

    // The next change goes to the real watcher alone, once.
    await ok(200, renameBoard(user, board.id, 'Again'));
    expect(await real.next()).toMatchObject({ type: 'board.updated', board: { title: 'Again' } });
    await real.expectNoFrame(300);
  });
});
