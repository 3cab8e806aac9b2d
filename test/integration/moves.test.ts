import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../lib/data/table';
import {
  type CardView,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  readTree,
  type TestUser,
  type TreeView,
  unknownId,
} from '../support/api';
import { useLocalTable } from '../support/local-table';

// --- helpers -------------------------------------------------------------------------------------

const movePath = (id: string) => `/cards/${id}/move`;
const requestMove = (user: TestUser, id: string, body: unknown) =>
  call<CardView>('PATCH', movePath(id), { token: user.token, body });

async function move(user: TestUser, id: string, body: Record<string, unknown>) {
  const reply = await requestMove(user, id, body);
  expect({ status: reply.status, body: reply.body }).toMatchObject({ status: 200 });
  return reply.body;
}

async function current(user: TestUser, id: string) {
  const reply = await call<CardView>('GET', `/cards/${id}`, { token: user.token });
  expect(reply.status).toBe(200);
  return reply.body;
}

const byText = (p: string, q: string) => (p < q ? -1 : p > q ? 1 : 0);

/** Card ids per column, in tree order. */
const layout = (tree: TreeView) => tree.columns.map((column) => column.cards.map((card) => card.id));

/**
 * A board with columns X and Y: X holds a (1), b (2), c (3); Y holds d (1), e (2).
 */
async function setup() {
  const owner = await newUser();
  const board = await newBoard(owner);
  const x = await newColumn(owner, board.id, 'X');
  const y = await newColumn(owner, board.id, 'Y');
  const a = await newCard(owner, x.id, { title: 'a', description: 'about a' });
  const b = await newCard(owner, x.id, { title: 'b' });
  const c = await newCard(owner, x.id, { title: 'c' });
  const d = await newCard(owner, y.id, { title: 'd' });
  const e = await newCard(owner, y.id, { title: 'e' });
  expect([a, b, c, d, e].map((card) => card.position)).toEqual([1, 2, 3, 1, 2]);
  return { owner, board, x, y, a, b, c, d, e };
}

/** Asserts that a refused move wrote nothing: the card and the whole tree are as before. */
async function expectNothingWritten(user: TestUser, boardId: string, card: CardView, treeBefore: TreeView) {
  expect(await current(user, card.id)).toEqual(card);
  expect(await readTree(user, boardId)).toEqual(treeBefore);
}

// --- tests ---------------------------------------------------------------------------------------

/** For the state a board's deletion leaves until the collector has run (written directly). */
const table = useLocalTable();

describe('PATCH /cards/{id}/move: the neighbour table', () => {
  it('before and after given: the midpoint of their positions', async () => {
    const { owner, board, x, a, b, c } = await setup();
    const moved = await move(owner, c.id, { target_column_id: x.id, before_id: a.id, after_id: b.id });
    expect(moved).toEqual({ ...c, position: 1.5 });
    expect(await current(owner, c.id)).toEqual(moved);
    expect(layout(await readTree(owner, board.id))[0]).toEqual([a.id, c.id, b.id]);
  });

  it('before only: position of the before card + 1.0', async () => {
    const { owner, board, x, a, b, c } = await setup();
    const moved = await move(owner, a.id, { target_column_id: x.id, before_id: c.id });
    expect(moved).toEqual({ ...a, position: 4 });
    expect(await current(owner, a.id)).toEqual(moved);
    expect(layout(await readTree(owner, board.id))[0]).toEqual([b.id, c.id, a.id]);
  });

  it('after only: position of the after card - 1.0', async () => {
    const { owner, board, x, a, b, c } = await setup();
    const moved = await move(owner, c.id, { target_column_id: x.id, after_id: a.id });
    expect(moved).toEqual({ ...c, position: 0 });
    expect(await current(owner, c.id)).toEqual(moved);
    expect(layout(await readTree(owner, board.id))[0]).toEqual([c.id, a.id, b.id]);
  });

  it('neither given: 1.0', async () => {
    const { owner, x, c } = await setup();
    const moved = await move(owner, c.id, { target_column_id: x.id });
    expect(moved).toEqual({ ...c, position: 1 });
    expect(await current(owner, c.id)).toEqual(moved);
  });

  it('null before_id and after_id are the same as omitted', async () => {
    const { owner, x, y, a, b, d } = await setup();
    expect(await move(owner, b.id, { target_column_id: x.id, before_id: null, after_id: null })).toEqual({ ...b, position: 1 });
    expect(await move(owner, a.id, { target_column_id: y.id, before_id: d.id, after_id: null })).toEqual({
      ...a,
      column_id: y.id,
      position: 2,
    });
    expect(await move(owner, b.id, { target_column_id: y.id, before_id: null, after_id: d.id })).toEqual({
      ...b,
      column_id: y.id,
      position: 0,
    });
  });

  it('the midpoint follows the neighbours as they move', async () => {
    const { owner, x, a, b, c } = await setup();
    expect((await move(owner, c.id, { target_column_id: x.id, before_id: a.id, after_id: b.id })).position).toBe(1.5);
    expect((await move(owner, b.id, { target_column_id: x.id, before_id: a.id, after_id: c.id })).position).toBe(1.25);
    expect((await move(owner, a.id, { target_column_id: x.id, before_id: b.id, after_id: c.id })).position).toBe(1.375);
  });

  it('names neighbours in either order: the midpoint is the same', async () => {
    const { owner, x, a, c, d } = await setup();
    // "before" need not be the lower one: the table only averages the two positions.
    expect((await move(owner, d.id, { target_column_id: x.id, before_id: c.id, after_id: a.id })).position).toBe(2);
  });

  it('only id, title, description and created_at of the moved card survive unchanged; other cards stay put', async () => {
    const { owner, board, x, y, a, b, c, d, e } = await setup();
    const before = await readTree(owner, board.id);
    const moved = await move(owner, a.id, { target_column_id: y.id, before_id: d.id, after_id: e.id });
    expect(moved).toEqual({ ...a, column_id: y.id, position: 1.5 });
    const after = await readTree(owner, board.id);
    expect(after.columns[0]!.cards).toEqual([b, c]);
    expect(after.columns[1]!.cards).toEqual([d, moved, e]);
    // The board itself is unchanged but for its seq: the move was its one change.
    expect({ ...after, columns: [] }).toEqual({ ...before, columns: [], seq: (before as TreeView & { seq: number }).seq + 1 });
    expect(after.columns.map(({ cards, ...column }) => column)).toEqual(before.columns.map(({ cards, ...column }) => column));
    expect([x.id, y.id]).toEqual(after.columns.map((column) => column.id));
  });
});

describe('PATCH /cards/{id}/move: between columns of the same board', () => {
  it("changes the card's column_id; the tree shows it in exactly one column", async () => {
    const { owner, board, x, y, a, b, c, d, e } = await setup();
    const moved = await move(owner, b.id, { target_column_id: y.id });
    expect(moved).toEqual({ ...b, column_id: y.id, position: 1 });
    expect(await current(owner, b.id)).toEqual(moved);
    const tree = await readTree(owner, board.id);
    const where = tree.columns.filter((column) => column.cards.some((card) => card.id === b.id)).map((column) => column.id);
    expect(where).toEqual([y.id]);
    expect(tree.columns[0]!.cards.map((card) => card.id)).toEqual([a.id, c.id]);
    // b and d tie at 1.0: the older one (created_at, then id) comes first.
    const [older, newer] = [b, d].sort((p, q) => byText(p.created_at, q.created_at) || byText(p.id, q.id));
    expect(tree.columns[1]!.cards.map((card) => card.id)).toEqual([older!.id, newer!.id, e.id]);
    expect(tree.columns.flatMap((column) => column.cards)).toHaveLength(5);
    expect(x.id).toBe(tree.columns[0]!.id);
  });

  it('moves there and back', async () => {
    const { owner, board, x, y, a, b, c, d, e } = await setup();
    expect((await move(owner, b.id, { target_column_id: y.id, before_id: e.id })).position).toBe(3);
    expect(layout(await readTree(owner, board.id))).toEqual([
      [a.id, c.id],
      [d.id, e.id, b.id],
    ]);
    const back = await move(owner, b.id, { target_column_id: x.id, before_id: a.id, after_id: c.id });
    expect(back).toEqual({ ...b, column_id: x.id, position: 2 });
    expect(layout(await readTree(owner, board.id))).toEqual([
      [a.id, b.id, c.id],
      [d.id, e.id],
    ]);
  });

  it('into an empty column with no neighbours: 1.0', async () => {
    const { owner, board, a } = await setup();
    const empty = await newColumn(owner, board.id, 'Empty');
    expect(await move(owner, a.id, { target_column_id: empty.id })).toEqual({ ...a, column_id: empty.id, position: 1 });
    expect(layout(await readTree(owner, board.id))[2]).toEqual([a.id]);
  });

  it('accepts ids in upper case (UUIDs are case-insensitive)', async () => {
    const { owner, board, y, a, d, e } = await setup();
    const moved = await move(owner, a.id.toUpperCase(), {
      target_column_id: y.id.toUpperCase(),
      before_id: d.id.toUpperCase(),
      after_id: e.id.toUpperCase(),
    });
    expect(moved).toEqual({ ...a, column_id: y.id, position: 1.5 });
    expect(layout(await readTree(owner, board.id))[1]).toEqual([d.id, a.id, e.id]);
  });

  it('ignores position, column_id and other fields in the body', async () => {
    const { owner, x, y, a, d } = await setup();
    const moved = await move(owner, a.id, {
      target_column_id: y.id,
      before_id: d.id,
      position: 77,
      column_id: x.id,
      id: unknownId(),
      created_at: '2000-01-01T00:00:00.000Z',
      title: 'renamed?',
    });
    expect(moved).toEqual({ ...a, column_id: y.id, position: 2 });
    expect(await current(owner, a.id)).toEqual(moved);
  });
});

describe('PATCH /cards/{id}/move: refusals write nothing', () => {
  it('target column on another board of the same owner: 403', async () => {
    const { owner, board, a, b } = await setup();
    const otherBoard = await newBoard(owner, 'Other');
    const otherColumn = await newColumn(owner, otherBoard.id);
    const otherCard = await newCard(owner, otherColumn.id);
    const tree = await readTree(owner, board.id);
    const otherTree = await readTree(owner, otherBoard.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: otherColumn.id }), 403);
    expectProblem(await requestMove(owner, a.id, { target_column_id: otherColumn.id, before_id: otherCard.id }), 403);
    expectProblem(await requestMove(owner, a.id, { target_column_id: otherColumn.id, before_id: b.id }), 403);
    await expectNothingWritten(owner, board.id, a, tree);
    expect(await readTree(owner, otherBoard.id)).toEqual(otherTree);
  });

  it('target column on a board the caller is not a member of: 403', async () => {
    const { owner, board, a } = await setup();
    const other = await newUser();
    const foreignBoard = await newBoard(other);
    const foreignColumn = await newColumn(other, foreignBoard.id);
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: foreignColumn.id }), 403);
    await expectNothingWritten(owner, board.id, a, tree);
    expect((await readTree(other, foreignBoard.id)).columns[0]!.cards).toEqual([]);
  });

  it('the other-board check comes before the neighbour lookups: nonexistent before_id/after_id still 403', async () => {
    const { owner, board, a } = await setup();
    const otherBoard = await newBoard(owner, 'Other');
    const otherColumn = await newColumn(owner, otherBoard.id);
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: otherColumn.id, before_id: unknownId() }), 403);
    expectProblem(await requestMove(owner, a.id, { target_column_id: otherColumn.id, after_id: unknownId() }), 403);
    expectProblem(
      await requestMove(owner, a.id, { target_column_id: otherColumn.id, before_id: unknownId(), after_id: unknownId() }),
      403,
    );
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('target column that does not exist: 404', async () => {
    const { owner, board, a, b } = await setup();
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: unknownId() }), 404);
    expectProblem(await requestMove(owner, a.id, { target_column_id: unknownId(), before_id: b.id }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('target column of a deleted board: 404 (it no longer exists)', async () => {
    const { owner, board, a } = await setup();
    const doomed = await newBoard(owner, 'Doomed');
    const doomedColumn = await newColumn(owner, doomed.id);
    expect((await call('DELETE', `/boards/${doomed.id}`, { token: owner.token })).status).toBe(204);
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: doomedColumn.id }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('target column whose board is being deleted, its lookup not yet collected: 404, not "another board"', async () => {
    const { owner, board, a } = await setup();
    // The state between a board's DELETE and the collector reaching the column's lookup item.
    const columnId = unknownId();
    await table.client.send(
      new PutCommand({
        TableName: table.name,
        Item: { ...keys.columnLookup(columnId), board_id: unknownId(), card_version: 0 },
      }),
    );
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: columnId }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('a card id given as the target column: 404 (it is not a column)', async () => {
    const { owner, board, a, b } = await setup();
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: b.id }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('before_id that does not exist: 404', async () => {
    const { owner, board, x, a, b } = await setup();
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: x.id, before_id: unknownId() }), 404);
    expectProblem(await requestMove(owner, a.id, { target_column_id: x.id, before_id: unknownId(), after_id: b.id }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('after_id that does not exist: 404', async () => {
    const { owner, board, y, a, d } = await setup();
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: y.id, after_id: unknownId() }), 404);
    expectProblem(await requestMove(owner, a.id, { target_column_id: y.id, before_id: d.id, after_id: unknownId() }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('before_id or after_id naming a card of another board: 404', async () => {
    const { owner, board, y, a, d } = await setup();
    const otherBoard = await newBoard(owner, 'Other');
    const otherCard = await newCard(owner, (await newColumn(owner, otherBoard.id)).id);
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: y.id, before_id: otherCard.id }), 404);
    expectProblem(await requestMove(owner, a.id, { target_column_id: y.id, after_id: otherCard.id }), 404);
    expectProblem(await requestMove(owner, a.id, { target_column_id: y.id, before_id: d.id, after_id: otherCard.id }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it("before_id naming a card of a board the caller cannot see: 404, and that card's board is untouched", async () => {
    const { owner, board, y, a } = await setup();
    const other = await newUser();
    const foreignBoard = await newBoard(other);
    const foreignCard = await newCard(other, (await newColumn(other, foreignBoard.id)).id);
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: y.id, before_id: foreignCard.id }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
    expect(await current(other, foreignCard.id)).toEqual(foreignCard);
  });

  it('before_id naming a deleted card: 404', async () => {
    const { owner, board, x, a, b } = await setup();
    expect((await call('DELETE', `/cards/${b.id}`, { token: owner.token })).status).toBe(204);
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, { target_column_id: x.id, before_id: b.id }), 404);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('a stranger moving a card that does not exist: 404', async () => {
    const { x } = await setup();
    const stranger = await newUser();
    const own = await newColumn(stranger, (await newBoard(stranger)).id);
    expectProblem(await requestMove(stranger, unknownId(), { target_column_id: x.id }), 404);
    expectProblem(await requestMove(stranger, unknownId(), { target_column_id: own.id }), 404);
    expectProblem(await requestMove(stranger, unknownId(), { target_column_id: unknownId() }), 404);
  });

  it('a stranger moving an existing card: 403, whatever the target', async () => {
    const { owner, board, x, y, a, d } = await setup();
    const stranger = await newUser();
    const own = await newColumn(stranger, (await newBoard(stranger)).id);
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(stranger, a.id, { target_column_id: y.id, before_id: d.id }), 403);
    expectProblem(await requestMove(stranger, a.id, { target_column_id: x.id }), 403);
    expectProblem(await requestMove(stranger, a.id, { target_column_id: own.id }), 403);
    // Step 1 (membership) comes before step 2 (target column exists).
    expectProblem(await requestMove(stranger, a.id, { target_column_id: unknownId() }), 403);
    await expectNothingWritten(owner, board.id, a, tree);
    expect((await readTree(stranger, own.board_id)).columns[0]!.cards).toEqual([]);
  });

  it('a card of a deleted board: 404 for its former owner', async () => {
    const { owner, board, x, a } = await setup();
    expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await requestMove(owner, a.id, { target_column_id: x.id }), 404);
  });

  it('needs a bearer token: 401', async () => {
    const { owner, board, y, a } = await setup();
    const tree = await readTree(owner, board.id);
    expectProblem(await call('PATCH', movePath(a.id), { body: { target_column_id: y.id } }), 401);
    await expectNothingWritten(owner, board.id, a, tree);
  });
});

describe('PATCH /cards/{id}/move: malformed requests (400 before any lookup)', () => {
  const malformed: [string, (ids: { x: string; b: string }) => unknown][] = [
    ['missing target_column_id', ({ b }) => ({ before_id: b })],
    ['empty body', () => ({})],
    ['null target_column_id', () => ({ target_column_id: null })],
    ['target_column_id not a UUID', () => ({ target_column_id: 'column-x' })],
    ['target_column_id a number', () => ({ target_column_id: 12 })],
    ['before_id not a UUID', ({ x }) => ({ target_column_id: x, before_id: 'b' })],
    ['after_id not a UUID', ({ x }) => ({ target_column_id: x, after_id: 5 })],
    ['before_id an empty string', ({ x }) => ({ target_column_id: x, before_id: '' })],
  ];

  it.each(malformed)('%s: 400 and nothing written', async (_, body) => {
    const { owner, board, x, a, b } = await setup();
    const tree = await readTree(owner, board.id);
    expectProblem(await requestMove(owner, a.id, body({ x: x.id, b: b.id })), 400);
    await expectNothingWritten(owner, board.id, a, tree);
  });

  it('a body that is not a JSON object: 400', async () => {
    const { owner, a } = await setup();
    for (const rawBody of ['{"target_column_id":', '[]', 'null', '']) {
      const reply = await call('PATCH', movePath(a.id), {
        token: owner.token,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(reply, 400);
    }
  });

  it('a card id that is not a UUID: 400', async () => {
    const { owner, x } = await setup();
    expectProblem(await requestMove(owner, 'card-a', { target_column_id: x.id }), 400);
  });

  it('a malformed body is 400 even for a stranger and a card that does not exist', async () => {
    const stranger = await newUser();
    expectProblem(await requestMove(stranger, unknownId(), {}), 400);
  });
});
