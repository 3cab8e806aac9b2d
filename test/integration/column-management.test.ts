import { randomUUID } from 'node:crypto';
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
  readTree,
  type TestUser,
  unknownId,
} from '../support/api';

/**
 * Reading, renaming, deleting and moving a column, and owner vs member vs stranger on each of
 * those routes, as a REST client sees them. Precedence as for cards: the column
 * exists, else 404; the caller is a member of its board, else 403.
 */

// --- helpers -------------------------------------------------------------------------------------

type ColumnWithCards = ColumnView & { cards: CardView[] };

const getColumn = (user: TestUser, id: string) => call<ColumnWithCards>('GET', `/columns/${id}`, { token: user.token });
const renameColumn = (user: TestUser, id: string, body: unknown) =>
  call<ColumnView>('PATCH', `/columns/${id}`, { token: user.token, body });
const deleteColumn = (user: TestUser, id: string) => call('DELETE', `/columns/${id}`, { token: user.token });
const moveColumn = (user: TestUser, id: string, body: unknown) =>
  call<ColumnView>('PATCH', `/columns/${id}/move`, { token: user.token, body });
const getCard = (user: TestUser, id: string) => call<CardView>('GET', `/cards/${id}`, { token: user.token });

const columnOrder = async (user: TestUser, boardId: string) => (await readTree(user, boardId)).columns.map((c) => c.title);

/** A board with the columns A, B, C (positions 1, 2, 3); A holds two cards, B one. */
async function boardABC(owner: TestUser) {
  const board = await newBoard(owner, 'Columns');
  const a = await newColumn(owner, board.id, 'A');
  const b = await newColumn(owner, board.id, 'B');
  const c = await newColumn(owner, board.id, 'C');
  const a1 = await newCard(owner, a.id, { title: 'a1' });
  const a2 = await newCard(owner, a.id, { title: 'a2', description: 'second' });
  const b1 = await newCard(owner, b.id, { title: 'b1' });
  return { board, a, b, c, a1, a2, b1 };
}

// --- tests ---------------------------------------------------------------------------------------

describe('GET /columns/{id}', () => {
  it('answers 200 with the Column fields and its cards by ascending position', async () => {
    const owner = await newUser();
    const { a, a1, a2, b } = await boardABC(owner);
    const a3 = await newCard(owner, a.id, { title: 'a3' });
    // Put a3 first: the answer must follow position, not creation order.
    const moved = await call('PATCH', `/cards/${a3.id}/move`, {
      token: owner.token,
      body: { target_column_id: a.id, after_id: a1.id },
    });
    expect(moved.status).toBe(200);

    const reply = await getColumn(owner, a.id);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ ...a, cards: [moved.body, a1, a2] });
    expect(Object.keys(reply.body).sort()).toEqual(['board_id', 'cards', 'id', 'position', 'title']);
    expect(reply.body.cards.map((card) => card.position)).toEqual([0, 1, 2]);

    // Only its own cards: B's card is not there, and B has its own.
    expect((await getColumn(owner, b.id)).body.cards.map((card) => card.title)).toEqual(['b1']);
  });

  it('answers the same column as the board tree, and an empty cards array for an empty column', async () => {
    const owner = await newUser();
    const { board, a, c } = await boardABC(owner);
    const tree = await readTree(owner, board.id);
    expect((await getColumn(owner, a.id)).body).toEqual(tree.columns.find((col) => col.id === a.id));
    expect((await getColumn(owner, c.id)).body).toEqual({ ...c, cards: [] });
  });

  it('shows a card moved in from another column, and no longer in the column it left', async () => {
    const owner = await newUser();
    const { a, b, b1 } = await boardABC(owner);
    const moved = await call('PATCH', `/cards/${b1.id}/move`, { token: owner.token, body: { target_column_id: a.id } });
    expect(moved.status).toBe(200);
    expect((await getColumn(owner, a.id)).body.cards.map((card) => card.id)).toContain(b1.id);
    expect((await getColumn(owner, b.id)).body.cards).toEqual([]);
  });

  it('answers 200 to a member who is not an owner', async () => {
    const owner = await newUser();
    const member = await newUser();
    const { board, a } = await boardABC(owner);
    await addMember(owner, board.id, member);
    const reply = await getColumn(member, a.id);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual((await getColumn(owner, a.id)).body);
  });

  it('answers 403 to a stranger on an existing column, revealing nothing', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id, 'Secret column');
    await newCard(owner, column.id, { title: 'Secret card' });
    const reply = await getColumn(stranger, column.id);
    expectProblem(reply, 403);
    expect(JSON.stringify(reply.body)).not.toMatch(/Secret/);
  });

  it('answers 404 for a column that does not exist, to anyone (existence is checked before membership)', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    await boardABC(owner);
    expectProblem(await getColumn(owner, unknownId()), 404);
    expectProblem(await getColumn(stranger, unknownId()), 404);
  });

  it('answers 404 for a card id', async () => {
    const owner = await newUser();
    const { a1 } = await boardABC(owner);
    expectProblem(await getColumn(owner, a1.id), 404);
  });

  it('answers 400 for a column id that is not a UUID', async () => {
    const owner = await newUser();
    expectProblem(await getColumn(owner, 'not-a-uuid'), 400);
    expectProblem(await getColumn(owner, `${unknownId()}0`), 400);
  });
});

describe('PATCH /columns/{id}', () => {
  it('answers 200 with the renamed Column; the title is persisted and nothing else changes', async () => {
    const owner = await newUser();
    const { board, b } = await boardABC(owner);
    const before = await readTree(owner, board.id);
    const reply = await renameColumn(owner, b.id, { title: 'Doing' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ ...b, title: 'Doing' });
    expect(Object.keys(reply.body).sort()).toEqual(['board_id', 'id', 'position', 'title']);

    expect(await readTree(owner, board.id)).toEqual({
      ...before,
      // The rename is the board's next change.
      seq: (before as typeof before & { seq: number }).seq + 1,
      columns: before.columns.map((col) => (col.id === b.id ? { ...col, title: 'Doing' } : col)),
    });
    expect((await getColumn(owner, b.id)).body.title).toBe('Doing');
  });

  it('stores the title as sent (surrounding whitespace, unicode, 256 characters)', async () => {
    const owner = await newUser();
    const { board, a } = await boardABC(owner);
    for (const title of ['  Fertig ✅ 完成  ', 'x'.repeat(256)]) {
      const reply = await renameColumn(owner, a.id, { title });
      expect(reply.status).toBe(200);
      expect(reply.body.title).toBe(title);
      expect((await readTree(owner, board.id)).columns[0]!.title).toBe(title);
    }
  });

  it('ignores id, board_id and position in the body', async () => {
    const owner = await newUser();
    const { board, a } = await boardABC(owner);
    const other = await newBoard(owner, 'Other');
    const reply = await renameColumn(owner, a.id, { title: 'Renamed', id: randomUUID(), board_id: other.id, position: 99 });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...a, title: 'Renamed' });
    expect(await columnOrder(owner, board.id)).toEqual(['Renamed', 'B', 'C']);
    expect((await readTree(owner, other.id)).columns).toEqual([]);
  });

  const invalidTitles: [string, unknown][] = [
    ['an empty title', { title: '' }],
    ['a title of spaces only', { title: '   ' }],
    ['a title of tabs and newlines only', { title: '\t\n\r\n' }],
    ['a title of 257 characters', { title: 'x'.repeat(257) }],
    ['a numeric title', { title: 7 }],
    ['a null title', { title: null }],
    ['an array title', { title: ['New'] }],
    ['a missing title', {}],
    ['a body that is an array', [{ title: 'New' }]],
  ];

  it.each(invalidTitles)('answers 400 for %s and leaves the column unchanged', async (_case, body) => {
    const owner = await newUser();
    const { board, a } = await boardABC(owner);
    const before = await readTree(owner, board.id);
    expectProblem(await renameColumn(owner, a.id, body), 400);
    expect(await readTree(owner, board.id)).toEqual(before);
  });

  it('lets a member who is not an owner rename', async () => {
    const owner = await newUser();
    const member = await newUser();
    const { board, c } = await boardABC(owner);
    await addMember(owner, board.id, member);
    const reply = await renameColumn(member, c.id, { title: 'By member' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...c, title: 'By member' });
    expect(await columnOrder(owner, board.id)).toEqual(['A', 'B', 'By member']);
  });

  it('answers 403 to a stranger, and the column is unchanged', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const { board, a } = await boardABC(owner);
    const before = await readTree(owner, board.id);
    expectProblem(await renameColumn(stranger, a.id, { title: 'Hijacked' }), 403);
    expect(await readTree(owner, board.id)).toEqual(before);
  });

  it('answers 404 for a column that does not exist, to anyone', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    await boardABC(owner);
    expectProblem(await renameColumn(owner, unknownId(), { title: 'Ghost' }), 404);
    expectProblem(await renameColumn(stranger, unknownId(), { title: 'Ghost' }), 404);
  });

  it('answers 400 for a column id that is not a UUID', async () => {
    const owner = await newUser();
    expectProblem(await renameColumn(owner, 'not-a-uuid', { title: 'New' }), 400);
  });
});

describe('DELETE /columns/{id}', () => {
  it('answers 204 with no body; the column is gone from the tree, the others keep their cards and positions', async () => {
    const owner = await newUser();
    const { board, a, b, c } = await boardABC(owner);
    const before = await readTree(owner, board.id);
    const reply = await deleteColumn(owner, a.id);
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');

    expect(await readTree(owner, board.id)).toEqual({
      ...before,
      // The deletion is the board's next change (its cards' deletions take no seq of their own).
      seq: (before as typeof before & { seq: number }).seq + 1,
      columns: before.columns.filter((col) => col.id !== a.id),
    });
    expect((await readTree(owner, board.id)).columns.map((col) => col.id)).toEqual([b.id, c.id]);
  });

  it('takes its cards with it: every card is 404 by id, on every card route', async () => {
    const owner = await newUser();
    const { a, a1, a2, b, b1 } = await boardABC(owner);
    expect((await deleteColumn(owner, a.id)).status).toBe(204);
    for (const card of [a1, a2]) {
      expectProblem(await getCard(owner, card.id), 404);
      expectProblem(await call('PATCH', `/cards/${card.id}`, { token: owner.token, body: { title: 'Edited' } }), 404);
      expectProblem(await call('PATCH', `/cards/${card.id}/move`, { token: owner.token, body: { target_column_id: b.id } }), 404);
      expectProblem(await call('DELETE', `/cards/${card.id}`, { token: owner.token }), 404);
    }
    // None of them turned up elsewhere, and B's card is untouched.
    expect((await getColumn(owner, b.id)).body.cards).toEqual([b1]);
    expect((await getCard(owner, b1.id)).body).toEqual(b1);
  });

  it('leaves nothing addressable: the column is 404 on every column route, creating a card in it is 404', async () => {
    const owner = await newUser();
    const { board, a, b } = await boardABC(owner);
    expect((await deleteColumn(owner, a.id)).status).toBe(204);
    const before = await readTree(owner, board.id);
    expectProblem(await getColumn(owner, a.id), 404);
    expectProblem(await renameColumn(owner, a.id, { title: 'Back?' }), 404);
    expectProblem(await moveColumn(owner, a.id, { after_id: b.id }), 404);
    expectProblem(await deleteColumn(owner, a.id), 404);
    expectProblem(await call('POST', `/columns/${a.id}/cards`, { token: owner.token, body: { title: 'Late' } }), 404);
    expect(await readTree(owner, board.id)).toEqual(before);
  });

  it('answers 404 for moving another card into the deleted column, and that card stays where it was', async () => {
    const owner = await newUser();
    const { board, a, b, b1 } = await boardABC(owner);
    expect((await deleteColumn(owner, a.id)).status).toBe(204);
    const before = await readTree(owner, board.id);
    expectProblem(await call('PATCH', `/cards/${b1.id}/move`, { token: owner.token, body: { target_column_id: a.id } }), 404);
    expect((await getCard(owner, b1.id)).body).toEqual(b1);
    expect((await getColumn(owner, b.id)).body.cards).toEqual([b1]);
    expect(await readTree(owner, board.id)).toEqual(before);
  });

  it('answers 404 for naming the deleted column as a neighbour of a column move', async () => {
    const owner = await newUser();
    const { board, a, b, c } = await boardABC(owner);
    expect((await deleteColumn(owner, a.id)).status).toBe(204);
    const before = await readTree(owner, board.id);
    expectProblem(await moveColumn(owner, c.id, { after_id: a.id }), 404);
    expectProblem(await moveColumn(owner, c.id, { before_id: a.id, after_id: b.id }), 404);
    expect(await readTree(owner, board.id)).toEqual(before);
  });

  it('deletes a column of 30 cards completely', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const big = await newColumn(owner, board.id, 'Big');
    const kept = await newColumn(owner, board.id, 'Kept');
    const keptCard = await newCard(owner, kept.id, { title: 'kept' });
    const cards: CardView[] = [];
    for (let i = 0; i < 30; i++) cards.push(await newCard(owner, big.id, { title: `card ${i}` }));
    expect((await getColumn(owner, big.id)).body.cards).toHaveLength(30);

    expect((await deleteColumn(owner, big.id)).status).toBe(204);
    const tree = await readTree(owner, board.id);
    expect(tree.columns).toEqual([{ ...kept, cards: [keptCard] }]);
    const statuses = await Promise.all(cards.map(async (card) => (await getCard(owner, card.id)).status));
    expect(statuses).toEqual(cards.map(() => 404));
    expectProblem(await getColumn(owner, big.id), 404);
  });

  it('does not touch another board', async () => {
    const owner = await newUser();
    const first = await boardABC(owner);
    const second = await boardABC(owner);
    const before = await readTree(owner, second.board.id);
    expect((await deleteColumn(owner, first.a.id)).status).toBe(204);
    expect(await readTree(owner, second.board.id)).toEqual(before);
  });

  it('lets a member who is not an owner delete a column', async () => {
    const owner = await newUser();
    const member = await newUser();
    const { board, a, b, a1 } = await boardABC(owner);
    await addMember(owner, board.id, member);
    expect((await deleteColumn(member, a.id)).status).toBe(204);
    expect((await readTree(owner, board.id)).columns.map((col) => col.id)).not.toContain(a.id);
    expect((await readTree(owner, board.id)).columns.map((col) => col.id)).toContain(b.id);
    expectProblem(await getCard(owner, a1.id), 404);
  });

  it('racing card creates into the column: every create that succeeded is gone with the column afterwards', async () => {
    const owner = await newUser();
    const { board, a, b, b1 } = await boardABC(owner);
    const [deleted, ...creates] = await Promise.all([
      deleteColumn(owner, a.id),
      ...Array.from({ length: 8 }, (_, i) =>
        call('POST', `/columns/${a.id}/cards`, { token: owner.token, body: { title: `race ${i}` } }),
      ),
    ]);
    expect(deleted.status).toBe(204);
    for (const reply of creates) expect([201, 404]).toContain(reply.status);
    for (const reply of creates.filter((r) => r.status === 201)) expectProblem(await getCard(owner, reply.body.id), 404);
    const tree = await readTree(owner, board.id);
    expect(tree.columns.map((col) => col.id)).not.toContain(a.id);
    expect(tree.columns.find((col) => col.id === b.id)?.cards).toEqual([b1]);
  });

  it('racing card moves into the column: a card either stayed where it was (404) or went with the column (200)', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const doomed = await newColumn(owner, board.id, 'Doomed');
    const source = await newColumn(owner, board.id, 'Source');
    const cards: CardView[] = [];
    for (let i = 0; i < 6; i++) cards.push(await newCard(owner, source.id, { title: `mover ${i}` }));
    const [deleted, ...moves] = await Promise.all([
      deleteColumn(owner, doomed.id),
      ...cards.map((card) =>
        call('PATCH', `/cards/${card.id}/move`, { token: owner.token, body: { target_column_id: doomed.id } }),
      ),
    ]);
    expect(deleted.status).toBe(204);
    const stayed: CardView[] = [];
    for (const [i, reply] of moves.entries()) {
      const card = cards[i]!;
      expect([200, 404]).toContain(reply.status);
      if (reply.status === 200) expectProblem(await getCard(owner, card.id), 404);
      else {
        expect((await getCard(owner, card.id)).body).toEqual(card);
        stayed.push(card);
      }
    }
    expect((await readTree(owner, board.id)).columns).toEqual([{ ...source, cards: stayed }]);
  });

  it('answers 403 to a stranger, and the column keeps its cards', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const { board, a, a1 } = await boardABC(owner);
    const before = await readTree(owner, board.id);
    expectProblem(await deleteColumn(stranger, a.id), 403);
    expect(await readTree(owner, board.id)).toEqual(before);
    expect((await getCard(owner, a1.id)).body).toEqual(a1);
  });

  it('answers 404 for a column that does not exist, to anyone', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    await boardABC(owner);
    expectProblem(await deleteColumn(owner, unknownId()), 404);
    expectProblem(await deleteColumn(stranger, unknownId()), 404);
  });

  it('answers 400 for a column id that is not a UUID', async () => {
    const owner = await newUser();
    expectProblem(await deleteColumn(owner, 'not-a-uuid'), 400);
  });
});

describe('PATCH /columns/{id}/move', () => {
  it('before and after given: the midpoint of the two, and the tree follows', async () => {
    const owner = await newUser();
    const { board, a, b, c } = await boardABC(owner);
    const reply = await moveColumn(owner, c.id, { before_id: a.id, after_id: b.id });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ ...c, position: 1.5 });
    expect(Object.keys(reply.body).sort()).toEqual(['board_id', 'id', 'position', 'title']);
    expect(await columnOrder(owner, board.id)).toEqual(['A', 'C', 'B']);
  });

  it('before only: the position of before + 1.0', async () => {
    const owner = await newUser();
    const { board, a, c } = await boardABC(owner);
    const reply = await moveColumn(owner, a.id, { before_id: c.id });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...a, position: 4 });
    expect(await columnOrder(owner, board.id)).toEqual(['B', 'C', 'A']);
  });

  it('after only: the position of after - 1.0', async () => {
    const owner = await newUser();
    const { board, a, c } = await boardABC(owner);
    const reply = await moveColumn(owner, c.id, { after_id: a.id });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...c, position: 0 });
    expect(await columnOrder(owner, board.id)).toEqual(['C', 'A', 'B']);
  });

  it('neither given (omitted or null): 1.0', async () => {
    const owner = await newUser();
    const { board, a, c } = await boardABC(owner);
    expect((await moveColumn(owner, a.id, { before_id: c.id })).body.position).toBe(4);
    const omitted = await moveColumn(owner, a.id, {});
    expect(omitted.status).toBe(200);
    expect(omitted.body).toEqual({ ...a, position: 1 });
    expect(await columnOrder(owner, board.id)).toEqual(['A', 'B', 'C']);

    expect((await moveColumn(owner, a.id, { before_id: c.id })).body.position).toBe(4);
    const nulls = await moveColumn(owner, a.id, { before_id: null, after_id: null });
    expect(nulls.status).toBe(200);
    expect(nulls.body).toEqual({ ...a, position: 1 });
  });

  it('moves the column with its cards, and the next new column still goes to the end', async () => {
    const owner = await newUser();
    const { board, a, b, c, a1, a2, b1 } = await boardABC(owner);
    const moved = await moveColumn(owner, a.id, { before_id: c.id });
    expect(moved.status).toBe(200);
    expect((await readTree(owner, board.id)).columns).toEqual([
      { ...b, cards: [b1] },
      { ...c, cards: [] },
      { ...a, position: 4, cards: [a1, a2] },
    ]);
    expect((await newColumn(owner, board.id, 'D')).position).toBe(5);
  });

  it('uses the neighbours’ current positions after earlier moves', async () => {
    const owner = await newUser();
    const { board, a, b, c } = await boardABC(owner);
    expect((await moveColumn(owner, c.id, { before_id: a.id, after_id: b.id })).body.position).toBe(1.5);
    const reply = await moveColumn(owner, b.id, { before_id: a.id, after_id: c.id });
    expect(reply.body).toEqual({ ...b, position: 1.25 });
    expect(await columnOrder(owner, board.id)).toEqual(['A', 'B', 'C']);
  });

  const foreignNeighbours: [string, (ctx: { owner: TestUser; cardId: string }) => Promise<string>][] = [
    ['a column of another board of the caller', async ({ owner }) => (await newColumn(owner, (await newBoard(owner)).id)).id],
    [
      'a column of a board the caller is not a member of',
      async () => {
        const other = await newUser();
        return (await newColumn(other, (await newBoard(other)).id)).id;
      },
    ],
    ['an id that does not exist', async () => unknownId()],
    ['the id of a card of this board', async ({ cardId }) => cardId],
  ];

  describe.each(foreignNeighbours)('a neighbour that is %s', (_case, neighbour) => {
    it.each(['before_id', 'after_id'])('as %s: 404 and nothing changes', async (field) => {
      const owner = await newUser();
      const { board, b, c, a1 } = await boardABC(owner);
      const id = await neighbour({ owner, cardId: a1.id });
      const before = await readTree(owner, board.id);
      expectProblem(await moveColumn(owner, c.id, { [field]: id }), 404);
      const other = field === 'before_id' ? 'after_id' : 'before_id';
      expectProblem(await moveColumn(owner, c.id, { [field]: id, [other]: b.id }), 404);
      expect(await readTree(owner, board.id)).toEqual(before);
    });
  });

  it('lets a member who is not an owner move a column', async () => {
    const owner = await newUser();
    const member = await newUser();
    const { board, a, b, c } = await boardABC(owner);
    await addMember(owner, board.id, member);
    const reply = await moveColumn(member, a.id, { before_id: b.id, after_id: c.id });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...a, position: 2.5 });
    expect(await columnOrder(owner, board.id)).toEqual(['B', 'A', 'C']);
  });

  it('answers 403 to a stranger, even naming valid neighbours, and nothing changes', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const { board, a, b, c } = await boardABC(owner);
    const before = await readTree(owner, board.id);
    expectProblem(await moveColumn(stranger, c.id, { before_id: a.id, after_id: b.id }), 403);
    expectProblem(await moveColumn(stranger, c.id, {}), 403);
    // Membership is checked before the neighbours: a bad neighbour does not turn the 403 into a 404.
    expectProblem(await moveColumn(stranger, c.id, { before_id: unknownId() }), 403);
    expect(await readTree(owner, board.id)).toEqual(before);
  });

  it('answers 404 to a stranger moving their own column next to a column of a board they are not on', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const { board, a } = await boardABC(owner);
    const own = await newBoard(stranger);
    const ownColumn = await newColumn(stranger, own.id, 'Mine');
    const before = await readTree(owner, board.id);
    // The addressed column is the stranger's own: the foreign neighbour is simply not a column of this board.
    expectProblem(await moveColumn(stranger, ownColumn.id, { before_id: a.id }), 404);
    expect(await readTree(owner, board.id)).toEqual(before);
    expect((await readTree(stranger, own.id)).columns).toEqual([{ ...ownColumn, cards: [] }]);
  });

  it('answers 404 for a column that does not exist, to anyone', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const { a } = await boardABC(owner);
    expectProblem(await moveColumn(owner, unknownId(), { before_id: a.id }), 404);
    expectProblem(await moveColumn(stranger, unknownId(), {}), 404);
  });

  const invalidBodies: [string, unknown][] = [
    ['a before_id that is not a UUID', { before_id: 'not-a-uuid' }],
    ['an after_id that is not a UUID', { after_id: '12345' }],
    ['a numeric before_id', { before_id: 1 }],
    ['an after_id that is an object', { after_id: { id: 'x' } }],
    ['a body that is an array', []],
  ];

  it.each(invalidBodies)('answers 400 for %s and nothing changes', async (_case, body) => {
    const owner = await newUser();
    const { board, c } = await boardABC(owner);
    const before = await readTree(owner, board.id);
    expectProblem(await moveColumn(owner, c.id, body), 400);
    expect(await readTree(owner, board.id)).toEqual(before);
  });

  it('answers 400 for a column id that is not a UUID', async () => {
    const owner = await newUser();
    expectProblem(await moveColumn(owner, 'not-a-uuid', {}), 400);
  });
});
