import { randomUUID } from 'node:crypto';
import { MAX_DESCRIPTION_LENGTH } from '../../lib/domain/limits';
import {
  addMember,
  type CardView,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  type Reply,
  readTree,
  type TestUser,
  unknownId,
} from '../support/api';
import { readPartition, useLocalTable } from '../support/local-table';
import { closeAllSockets, connect } from '../support/sockets';
import { eventually } from '../support/wait';

/**
 * POST /boards/{id}/batch over the local stack: operations applied as their single routes would
 * apply them one after another, or none; their events consecutive; refs; the checks' order.
 */

type Operation = Record<string, unknown> & { op: string };

const batch = (user: TestUser, boardId: string, operations: Operation[], headers: Record<string, string> = {}) =>
  call('POST', `/boards/${boardId}/batch`, { token: user.token, body: { operations }, headers });

interface Event {
  type: string;
  seq: number;
  card?: { id: string };
  column?: { id: string };
  card_id?: string;
}
async function eventsOf(user: TestUser, boardId: string, after = 0): Promise<Event[]> {
  const reply = await call('GET', `/boards/${boardId}/events?after=${after}&limit=1000`, { token: user.token });
  expect(reply.status).toBe(200);
  return reply.body.events;
}

const latestSeq = async (user: TestUser, boardId: string) =>
  (await call('GET', `/boards/${boardId}/events?after=0&limit=1`, { token: user.token })).body.latest_seq as number;

/** A full batch of card creates into one column, titled `<title> 0` to `<title> 24`. */
const cardCreates = (columnId: string, title = 'card'): Operation[] =>
  Array.from({ length: 25 }, (_, i) => ({ op: 'card.create', column_id: columnId, title: `${title} ${i}` }));

/** An operation's problem: the status, its code and the operation's index. */
function expectOperationProblem(reply: Reply, status: number, operation: number, code?: string) {
  const problem = expectProblem(reply, status) as ReturnType<typeof expectProblem> & { operation?: number };
  expect(problem.operation).toBe(operation);
  if (code) expect(problem.code).toBe(code);
  return problem;
}

const table = useLocalTable();

describe('POST /boards/{id}/batch', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await newUser();
  });
  afterAll(closeAllSockets);

  it('appends 25 cards to a column after its cards, positions one apart, each result the card as GET /cards/{id} answers it', async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    await newCard(user, column.id, { title: 'first' });
    await newCard(user, column.id, { title: 'second' });
    const before = await latestSeq(user, board.id);
    const operations = cardCreates(column.id);
    const reply = await batch(user, board.id, operations);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('etag')).toBeNull();
    const results = reply.body.results as CardView[];
    expect(results.map((card) => card.position)).toEqual(Array.from({ length: 25 }, (_, i) => i + 3));
    for (const result of results.slice(0, 3)) {
      expect((await call('GET', `/cards/${result.id}`, { token: user.token })).body).toEqual(result);
    }
    const events = await eventsOf(user, board.id, before);
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 25 }, (_, i) => before + i + 1));
    expect(events.map((event) => [event.type, event.card?.id])).toEqual(results.map((card) => ['card.created', card.id]));
    expect(events.map((event) => event.card)).toEqual(results);
  });

  it('answers what the single routes answer, applied one after another, refs standing for the ids made', async () => {
    const board = await newBoard(user);
    const todo = await newColumn(user, board.id, 'To do');
    const old = await newCard(user, todo.id, { title: 'old', description: 'kept' });
    const operations: Operation[] = [
      { op: 'column.create', title: 'Doing', ref: 'doing' },
      { op: 'card.create', column_ref: 'doing', title: 'a', ref: 'a' },
      { op: 'card.create', column_ref: 'doing', title: 'b', description: 'bee', ref: 'b' },
      { op: 'card.update', card_ref: 'a', title: 'a2', description: null },
      { op: 'card.update', card_ref: 'a', title: 'a2' },
      { op: 'card.move', card_ref: 'a', target_column_ref: 'doing', after_ref: 'b' },
      { op: 'card.move', card_id: old.id, target_column_ref: 'doing', before_ref: 'b' },
      { op: 'card.create', column_id: todo.id, title: 'c', ref: 'c' },
      { op: 'card.move', card_ref: 'c', target_column_id: todo.id, before_id: null, after_id: null },
      { op: 'card.delete', card_ref: 'b' },
    ];
    const reply = await batch(user, board.id, operations);
    expect(reply.status).toBe(200);
    const results = reply.body.results;

    // The same operations through the single routes, on a board of the same shape.
    const other = await newBoard(user);
    const otherTodo = await newColumn(user, other.id, 'To do');
    const otherOld = await newCard(user, otherTodo.id, { title: 'old', description: 'kept' });
    const ids = new Map<string, string>([[old.id, otherOld.id]]);
    const idOf = (operation: Operation, field: string) =>
      operation[`${field}_ref`] !== undefined
        ? ids.get(String(operation[`${field}_ref`]))
        : operation[`${field}_id`] === undefined
          ? undefined
          : operation[`${field}_id`] === null
            ? null
            : (ids.get(String(operation[`${field}_id`])) ?? (operation[`${field}_id`] === todo.id ? otherTodo.id : undefined));
    const single: unknown[] = [];
    for (const operation of operations) {
      let answer: Reply;
      if (operation.op === 'column.create') {
        answer = await call('POST', `/boards/${other.id}/columns`, { token: user.token, body: { title: operation.title } });
      } else if (operation.op === 'card.create') {
        answer = await call('POST', `/columns/${idOf(operation, 'column')}/cards`, {
          token: user.token,
          body: { title: operation.title, description: operation.description },
        });
      } else if (operation.op === 'card.update') {
        answer = await call('PATCH', `/cards/${idOf(operation, 'card')}`, {
          token: user.token,
          body: { title: operation.title, description: operation.description },
        });
      } else if (operation.op === 'card.move') {
        answer = await call('PATCH', `/cards/${idOf(operation, 'card')}/move`, {
          token: user.token,
          body: {
            target_column_id: idOf(operation, 'target_column'),
            before_id: idOf(operation, 'before'),
            after_id: idOf(operation, 'after'),
          },
        });
      } else answer = await call('DELETE', `/cards/${idOf(operation, 'card')}`, { token: user.token });
      expect(answer.status).toBeLessThan(300);
      single.push(answer.status === 204 ? null : answer.body);
      if (typeof operation.ref === 'string') ids.set(operation.ref, answer.body.id);
    }
    // Ids, times and the board differ; everything else is the same.
    const shape = (value: unknown) =>
      JSON.parse(
        JSON.stringify(value, (name, item) =>
          ['id', 'column_id', 'board_id', 'created_at'].includes(name) ? typeof item : item,
        ),
      );
    expect(shape(results)).toEqual(shape(single));
    const [batchEvents, singleEvents] = [await eventsOf(user, board.id), await eventsOf(user, other.id)];
    expect(batchEvents.map((event) => event.type)).toEqual(singleEvents.map((event) => event.type));
    // Three operations change nothing (the second update, and the moves of `a` and `c` to where
    // they already are): 10 operations, 7 changes, after the board's 2.
    expect(batchEvents.map((event) => event.seq)).toEqual(Array.from({ length: 9 }, (_, i) => i + 1));
    // The tree holds the final state.
    const tree = await readTree(user, board.id);
    expect(tree.columns.map((column) => [column.title, column.cards.map((card) => card.title)])).toEqual([
      ['To do', ['c']],
      ['Doing', ['a2', 'old']],
    ]);
  });

  it('appends after the highest card the column has left once earlier operations took cards out of it', async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const elsewhere = await newColumn(user, board.id);
    const cards = [];
    for (const title of ['one', 'two', 'three']) cards.push(await newCard(user, column.id, { title }));
    const reply = await batch(user, board.id, [
      { op: 'card.delete', card_id: cards[2]!.id },
      { op: 'card.move', card_id: cards[1]!.id, target_column_id: elsewhere.id },
      { op: 'card.create', column_id: column.id, title: 'new' },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body.results[2].position).toBe(2);
  });

  it('commits the most writes 25 operations can make in one transaction: creates into 25 columns, alternating with deletions of cards with comments', async () => {
    const board = await newBoard(user);
    const made = await batch(
      user,
      board.id,
      Array.from({ length: 25 }, (_, i) => ({ op: 'column.create', title: `column ${i}` })),
    );
    expect(made.status).toBe(200);
    const columns = made.body.results as { id: string; position: number }[];
    expect(columns.map((column) => column.position)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    const commented: string[] = [];
    for (let i = 0; i < 13; i++) {
      const card = await newCard(user, columns[i]!.id);
      expect((await call('POST', `/cards/${card.id}/comments`, { token: user.token, body: { body: 'note' } })).status).toBe(201);
      commented.push(card.id);
    }
    const seq = await latestSeq(user, board.id);
    // A create into an existing column writes the card, its lookup and the column's version; a
    // deleted card with comments takes a log item of its own (the collector's stream filter reads
    // it), so the create after it starts another: 13 deletions and 12 creates make 87 writes.
    const operations = Array.from({ length: 25 }, (_, i) =>
      i % 2 === 0
        ? { op: 'card.delete', card_id: commented[i / 2]! }
        : { op: 'card.create', column_id: columns[12 + (i + 1) / 2]!.id, title: `new ${i}` },
    );
    const reply = await batch(user, board.id, operations);
    expect(reply.status).toBe(200);
    expect(await latestSeq(user, board.id)).toBe(seq + 25);
    const events = await eventsOf(user, board.id, seq);
    expect(events.map((event) => [event.seq, event.type])).toEqual(
      operations.map((operation, i) => [seq + i + 1, operation.op === 'card.delete' ? 'card.deleted' : 'card.created']),
    );
    for (const id of commented) expect((await call('GET', `/cards/${id}`, { token: user.token })).status).toBe(404);
    // The collector heard each deletion: the cards' comments are removed after the answer.
    await eventually(async () => {
      const left = await readPartition(table.client, table.name, `BOARD#${board.id}`);
      expect(left.filter((item) => String(item.sk).startsWith('~COMMENT#'))).toEqual([]);
    });
  });

  it('keeps the events of a batch of edits to long cards (1.2 MB of events, more than one stored item holds)', async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const description = '€'.repeat(MAX_DESCRIPTION_LENGTH);
    const cards: CardView[] = [];
    for (let i = 0; i < 25; i++) cards.push(await newCard(user, column.id, { title: `long ${i}`, description }));
    const seq = await latestSeq(user, board.id);
    const reply = await batch(
      user,
      board.id,
      cards.map((card, i) => ({ op: 'card.update', card_id: card.id, title: `renamed ${i}` })),
    );
    expect(reply.status).toBe(200);
    // A page holds 1 MB of events at most: read on to the latest seq, as a client does.
    const events: Event[] = [];
    while (events.length < 25) {
      const page = await eventsOf(user, board.id, events.at(-1)?.seq ?? seq);
      expect(page.length).toBeGreaterThan(0);
      events.push(...page);
    }
    expect(events.map((event) => [event.seq, event.type, event.card?.id])).toEqual(
      cards.map((card, i) => [seq + i + 1, 'card.updated', card.id]),
    );
    expect(events.every((event) => (event as { card?: { description?: string } }).card?.description === description)).toBe(true);
  });

  it("sends a watcher the batch's events one by one, in order, exactly as the log lists them", async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const socket = await connect(user, 'watcher');
    await socket.watch(board.id);
    const before = await latestSeq(user, board.id);
    const reply = await batch(user, board.id, cardCreates(column.id, 'live'));
    expect(reply.status).toBe(200);
    await socket.waitFor((frame) => frame.seq === before + 25, 'the last event of the batch');
    const frames = socket.received.filter((frame) => typeof frame.seq === 'number' && (frame.seq as number) > before);
    expect(frames).toEqual(await eventsOf(user, board.id, before));
    expect(frames.map((frame) => frame.seq)).toEqual(Array.from({ length: 25 }, (_, i) => before + i + 1));
  });

  it("pages through a batch's events from any seq, whatever the page size", async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const before = await latestSeq(user, board.id);
    const reply = await batch(user, board.id, cardCreates(column.id));
    expect(reply.status).toBe(200);
    await newCard(user, column.id, { title: 'after the batch' });
    const all = Array.from({ length: 26 }, (_, i) => before + i + 1);
    for (const limit of [1, 7, 25, 100]) {
      // From inside the batch too: a client that caught up to the middle of it goes on from there.
      for (const start of [before, before + 1, before + 12, before + 24, before + 25]) {
        const seen: number[] = [];
        let after = start;
        for (let page = 0; page < 30 && after < before + 26; page++) {
          const answer = await call('GET', `/boards/${board.id}/events?after=${after}&limit=${limit}`, { token: user.token });
          expect(answer.status).toBe(200);
          const seqs = (answer.body.events as Event[]).map((event) => event.seq);
          expect(seqs.length).toBeGreaterThan(0);
          expect(seqs.length).toBeLessThanOrEqual(limit);
          expect(answer.body.latest_seq).toBe(before + 26);
          seen.push(...seqs);
          after = seqs.at(-1)!;
        }
        expect(seen).toEqual(all.filter((seq) => seq > start));
      }
    }
  });

  it('applies nothing when an operation fails: the first failure, with its index, and no event', async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const card = await newCard(user, column.id);
    const seq = await latestSeq(user, board.id);
    const reply = await batch(user, board.id, [
      { op: 'card.create', column_id: column.id, title: 'not kept' },
      { op: 'card.update', card_id: card.id, title: 'not kept either' },
      { op: 'card.delete', card_id: unknownId() },
      { op: 'card.update', card_id: unknownId(), title: 'never checked' },
    ]);
    expect(expectOperationProblem(reply, 404, 2, 'not_found').detail).toBe('Card was not found.');
    expect(await latestSeq(user, board.id)).toBe(seq);
    const tree = await readTree(user, board.id);
    expect(tree.columns[0]!.cards.map((c) => c.title)).toEqual([card.title]);
  });

  it('refuses an operation on a card deleted by an earlier one, a missing column, and an archived card moved (409)', async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const card = await newCard(user, column.id);
    expectOperationProblem(
      await batch(user, board.id, [
        { op: 'card.delete', card_id: card.id },
        { op: 'card.update', card_id: card.id, title: 'gone' },
      ]),
      404,
      1,
    );
    expectOperationProblem(await batch(user, board.id, [{ op: 'card.create', column_id: unknownId(), title: 'x' }]), 404, 0);
    expectOperationProblem(
      await batch(user, board.id, [
        { op: 'card.create', column_id: column.id, title: 'x', ref: 'x' },
        { op: 'card.move', card_ref: 'x', target_column_id: column.id, before_id: unknownId() },
      ]),
      404,
      1,
    );
    expect((await call('POST', `/cards/${card.id}/archive`, { token: user.token })).status).toBe(200);
    expectOperationProblem(
      await batch(user, board.id, [
        { op: 'card.update', card_id: card.id, title: 'archived cards can be edited' },
        { op: 'card.move', card_id: card.id, target_column_id: column.id },
      ]),
      409,
      1,
      'archived',
    );
    // An archived card is edited as PATCH /cards/{id} edits it.
    const edited = await batch(user, board.id, [{ op: 'card.update', card_id: card.id, title: 'edited in the archive' }]);
    expect(edited.status).toBe(200);
    expect(edited.body.results[0]).toMatchObject({
      id: card.id,
      title: 'edited in the archive',
      archived_at: expect.any(String),
    });
  });

  it("refuses a column or card of another board with 403 and the operation's index", async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const theirs = await newBoard(user);
    const theirColumn = await newColumn(user, theirs.id);
    const theirCard = await newCard(user, theirColumn.id);
    const seq = await latestSeq(user, board.id);
    expectOperationProblem(
      await batch(user, board.id, [
        { op: 'card.create', column_id: column.id, title: 'x' },
        { op: 'card.create', column_id: theirColumn.id, title: 'y' },
      ]),
      403,
      1,
      'forbidden',
    );
    expectOperationProblem(await batch(user, board.id, [{ op: 'card.update', card_id: theirCard.id, title: 'y' }]), 403, 0);
    expectOperationProblem(
      await batch(user, board.id, [
        { op: 'card.create', column_id: column.id, title: 'x', ref: 'x' },
        { op: 'card.move', card_ref: 'x', target_column_id: theirColumn.id },
      ]),
      403,
      1,
    );
    expect(await latestSeq(user, board.id)).toBe(seq);
    expect((await readTree(user, theirs.id)).columns[0]!.cards).toHaveLength(1);
  });

  it('refuses a caller who is not a member (403) and a board that does not exist (403, as every board route)', async () => {
    const board = await newBoard(user);
    const stranger = await newUser();
    const operations = [{ op: 'column.create', title: 'x' }];
    const problem = expectProblem(await batch(stranger, board.id, operations), 403) as { operation?: number };
    expect(problem.operation).toBeUndefined();
    expectProblem(await batch(user, unknownId(), operations), 403);
    // A member may.
    const member = await newUser();
    await addMember(user, board.id, member);
    expect((await batch(member, board.id, operations)).status).toBe(200);
  });

  it.each([
    ['no operations', { operations: [] }, 'body.operations'],
    ['26 operations', { operations: Array.from({ length: 26 }, () => ({ op: 'column.create', title: 'x' })) }, 'body.operations'],
    ['no operations field', {}, 'body.operations'],
    ['an unknown op', { operations: [{ op: 'column.delete', column_id: randomUUID() }] }, 'body.operations.0.op'],
    ['a blank title', { operations: [{ op: 'column.create', title: ' ' }] }, 'body.operations.0.title'],
    ['a card id that is no UUID', { operations: [{ op: 'card.delete', card_id: 'nope' }] }, 'body.operations.0.card_id'],
    ['a card without its column', { operations: [{ op: 'card.create', title: 'x' }] }, 'body.operations.0.column_id'],
    [
      'a move without its card',
      { operations: [{ op: 'card.move', target_column_id: randomUUID() }] },
      'body.operations.0.card_id',
    ],
    [
      'a ref used twice',
      {
        operations: [
          { op: 'column.create', title: 'x', ref: 'r' },
          { op: 'column.create', title: 'y', ref: 'r' },
        ],
      },
      'body.operations.1.ref',
    ],
    [
      'a ref used before it is made',
      {
        operations: [
          { op: 'card.delete', card_ref: 'r' },
          { op: 'column.create', title: 'x', ref: 'r' },
        ],
      },
      'body.operations.0.card_ref',
    ],
    [
      'a ref of the wrong kind',
      {
        operations: [
          { op: 'column.create', title: 'x', ref: 'r' },
          { op: 'card.delete', card_ref: 'r' },
        ],
      },
      'body.operations.1.card_ref',
    ],
    [
      'an id given with a ref',
      {
        operations: [
          { op: 'column.create', title: 'x', ref: 'r' },
          { op: 'card.create', column_ref: 'r', column_id: randomUUID(), title: 'y' },
        ],
      },
      'body.operations.1.column_ref',
    ],
    [
      'a ref of 65 characters',
      { operations: [{ op: 'column.create', title: 'x', ref: 'r'.repeat(65) }] },
      'body.operations.0.ref',
    ],
  ])('refuses a malformed batch before any lookup (400): %s', async (_, body, path) => {
    const board = await newBoard(user);
    // A stranger's batch still gets the 400 (checked before membership), and nothing changes.
    const stranger = await newUser();
    for (const caller of [user, stranger]) {
      const reply = await call('POST', `/boards/${board.id}/batch`, { token: caller.token, body });
      const problem = expectProblem(reply, 400) as { errors?: { path: string }[] };
      expect(problem.errors?.map((error) => error.path)).toContain(path);
    }
    expect(await latestSeq(user, board.id)).toBe(0);
  });

  it('changes nothing, sends nothing, for operations that change nothing, and answers the cards as they are', async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const card = await newCard(user, column.id, { title: 'same' });
    const seq = await latestSeq(user, board.id);
    const reply = await batch(user, board.id, [
      { op: 'card.update', card_id: card.id, title: 'same' },
      { op: 'card.move', card_id: card.id, target_column_id: column.id },
    ]);
    expect(reply.status).toBe(200);
    const current = (await call('GET', `/cards/${card.id}`, { token: user.token })).body;
    expect(reply.body.results).toEqual([current, current]);
    expect(await latestSeq(user, board.id)).toBe(seq);
  });

  it('honours an Idempotency-Key (the first answer again, nothing twice) and ignores If-Match', async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const key = randomUUID();
    const operations = [{ op: 'card.create', column_id: column.id, title: 'once' }];
    const headers = { 'idempotency-key': key, 'if-match': '"not-a-tag"' };
    const first = await batch(user, board.id, operations, headers);
    expect(first.status).toBe(200);
    const again = await batch(user, board.id, operations, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await readTree(user, board.id)).columns[0]!.cards).toHaveLength(1);
    expect((await batch(user, board.id, [{ op: 'column.create', title: 'other' }], headers)).status).toBe(422);
  });

  it("numbers a batch's events consecutively while single writes race it on the same board", async () => {
    const board = await newBoard(user);
    const column = await newColumn(user, board.id);
    const racer = await newColumn(user, board.id);
    const batches = Array.from({ length: 3 }, (_, b) =>
      batch(
        user,
        board.id,
        Array.from({ length: 8 }, (_, i) => ({ op: 'card.create', column_id: column.id, title: `batch ${b} card ${i}` })),
      ),
    );
    const singles = Array.from({ length: 12 }, (_, i) => newCard(user, i % 2 ? column.id : racer.id, { title: `single ${i}` }));
    const [replies] = await Promise.all([Promise.all(batches), Promise.all(singles)]);
    const events = await eventsOf(user, board.id);
    expect(events).toHaveLength(2 + 3 * 8 + 12);
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      const ids = (reply.body.results as CardView[]).map((card) => card.id);
      const seqs = events.filter((event) => ids.includes(event.card?.id ?? '')).map((event) => event.seq);
      expect(seqs).toHaveLength(8);
      expect(seqs).toEqual(Array.from({ length: 8 }, (_, i) => seqs[0]! + i));
    }
    // Every create in the column got a position of its own.
    const positions = (await readTree(user, board.id)).columns[0]!.cards.map((card) => card.position);
    expect(new Set(positions).size).toBe(positions.length);
  });
});
