import { type CardView, call, newBoard, newCard, newColumn, newUser, readTree, type TreeView } from '../support/api';

// --- helpers -------------------------------------------------------------------------------------

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const ascending = (values: number[]) => [...values].sort((a, b) => a - b);

/** Statuses with the body of any non-success next to it, so a failure says what came back. */
const outcomes = (replies: { status: number; body: unknown }[], ok: number) =>
  replies.map((reply) => (reply.status === ok ? ok : { status: reply.status, body: reply.body }));

/** Every card id of the tree, with the column it is listed in (a card listed twice appears twice). */
const placements = (tree: TreeView) =>
  tree.columns.flatMap((column) => column.cards.map((card) => ({ id: card.id, column: column.id })));

// --- tests ---------------------------------------------------------------------------------------

describe('concurrent requests', () => {
  it('20 creates at once in one column all succeed with the positions 1..20', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const column = await newColumn(owner, board.id);
    const replies = await Promise.all(
      range(1, 20).map((i) =>
        call<CardView>('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: `c${i}` } }),
      ),
    );
    expect(outcomes(replies, 201)).toEqual(Array(20).fill(201));
    const positions = replies.map((reply) => reply.body.position);
    expect(new Set(positions).size).toBe(20);
    expect(ascending(positions)).toEqual(range(1, 20));
    expect(new Set(replies.map((reply) => reply.body.id)).size).toBe(20);

    const tree = await readTree(owner, board.id);
    const cards = tree.columns[0]!.cards;
    expect(cards.map((card) => card.position)).toEqual(range(1, 20));
    expect(ascending(cards.map((card) => card.position))).toEqual(range(1, 20));
    expect(new Set(cards.map((card) => card.id))).toEqual(new Set(replies.map((reply) => reply.body.id)));
    // What each create answered is what is stored.
    const stored = new Map(cards.map((card) => [card.id, card]));
    for (const reply of replies) expect(stored.get(reply.body.id)).toEqual(reply.body);
    // And the next create still appends.
    expect((await newCard(owner, column.id)).position).toBe(21);
  });

  it('creates at once in two columns of one board: each column gets 1..n', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const left = await newColumn(owner, board.id, 'Left');
    const right = await newColumn(owner, board.id, 'Right');
    const requests = range(1, 24).map((i) =>
      call<CardView>('POST', `/columns/${i % 2 ? left.id : right.id}/cards`, { token: owner.token, body: { title: `c${i}` } }),
    );
    const replies = await Promise.all(requests);
    expect(outcomes(replies, 201)).toEqual(Array(24).fill(201));
    const positionsIn = (columnId: string) =>
      ascending(replies.filter((reply) => reply.body.column_id === columnId).map((reply) => reply.body.position));
    expect(positionsIn(left.id)).toEqual(range(1, 12));
    expect(positionsIn(right.id)).toEqual(range(1, 12));
    const tree = await readTree(owner, board.id);
    expect(tree.columns.map((column) => column.cards.map((card) => card.position))).toEqual([range(1, 12), range(1, 12)]);
  });

  it('creates at once in columns of two different boards do not disturb each other', async () => {
    const owner = await newUser();
    const first = await newBoard(owner, 'First');
    const second = await newBoard(owner, 'Second');
    const a = await newColumn(owner, first.id);
    const b = await newColumn(owner, second.id);
    const replies = await Promise.all(
      range(1, 16).map((i) =>
        call<CardView>('POST', `/columns/${i % 2 ? a.id : b.id}/cards`, { token: owner.token, body: { title: `c${i}` } }),
      ),
    );
    expect(outcomes(replies, 201)).toEqual(Array(16).fill(201));
    expect((await readTree(owner, first.id)).columns[0]!.cards.map((card) => card.position)).toEqual(range(1, 8));
    expect((await readTree(owner, second.id)).columns[0]!.cards.map((card) => card.position)).toEqual(range(1, 8));
  });

  it('10 columns at once on one board all succeed with the positions 1..10', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const replies = await Promise.all(
      range(1, 10).map((i) => call('POST', `/boards/${board.id}/columns`, { token: owner.token, body: { title: `col ${i}` } })),
    );
    expect(outcomes(replies, 201)).toEqual(Array(10).fill(201));
    expect(ascending(replies.map((reply) => reply.body.position))).toEqual(range(1, 10));
    const tree = await readTree(owner, board.id);
    expect(tree.columns.map((column) => column.id)).toEqual(
      [...replies].sort((a, b) => a.body.position - b.body.position).map((reply) => reply.body.id),
    );
  });

  it('20 moves at once of different cards between two columns: every card exactly once, in its target column', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const left = await newColumn(owner, board.id, 'Left');
    const right = await newColumn(owner, board.id, 'Right');
    const leftCards: CardView[] = [];
    const rightCards: CardView[] = [];
    for (let i = 0; i < 10; i++) leftCards.push(await newCard(owner, left.id, { title: `L${i}` }));
    for (let i = 0; i < 10; i++) rightCards.push(await newCard(owner, right.id, { title: `R${i}` }));
    const all = [...leftCards, ...rightCards];

    // Every card crosses over; the neighbour forms vary (none, before only, after only, both).
    const target = new Map<string, string>();
    const moves = all.map((card, i) => {
      const toRight = card.column_id === left.id;
      const targetId = toRight ? right.id : left.id;
      target.set(card.id, targetId);
      const body: Record<string, string> = { target_column_id: targetId };
      const anchorA = (toRight ? rightCards : leftCards)[i % 10]!;
      const anchorB = (toRight ? rightCards : leftCards)[(i + 3) % 10]!;
      if (i % 4 === 1) body.before_id = anchorA.id;
      if (i % 4 === 2) body.after_id = anchorA.id;
      if (i % 4 === 3) Object.assign(body, { before_id: anchorA.id, after_id: anchorB.id });
      return call<CardView>('PATCH', `/cards/${card.id}/move`, { token: owner.token, body });
    });
    const replies = await Promise.all(moves);
    expect(outcomes(replies, 200)).toEqual(Array(20).fill(200));
    for (const reply of replies) expect(reply.body.column_id).toBe(target.get(reply.body.id));

    const tree = await readTree(owner, board.id);
    const placed = placements(tree);
    expect(placed).toHaveLength(20);
    expect(new Set(placed.map((p) => p.id))).toEqual(new Set(all.map((card) => card.id)));
    for (const { id, column } of placed) expect(column).toBe(target.get(id));
    for (const column of tree.columns) {
      for (const card of column.cards) expect(card.column_id).toBe(column.id);
      const positions = column.cards.map((card) => card.position);
      expect(positions).toEqual(ascending(positions));
    }
    // Each card reads back as its move answered, titles and created_at untouched.
    const original = new Map(all.map((card) => [card.id, card]));
    const byId = new Map(tree.columns.flatMap((column) => column.cards).map((card) => [card.id, card]));
    for (const reply of replies) {
      expect(byId.get(reply.body.id)).toEqual(reply.body);
      const before = original.get(reply.body.id)!;
      expect(reply.body).toMatchObject({ title: before.title, created_at: before.created_at, description: before.description });
    }
  });

  it('moves at once of the same card to different columns: it ends in exactly one of them', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const columns: Awaited<ReturnType<typeof newColumn>>[] = [];
    for (let i = 0; i < 5; i++) columns.push(await newColumn(owner, board.id, `Col ${i}`));
    const card = await newCard(owner, columns[0]!.id, { title: 'contested' });
    const others = await Promise.all(columns.map((column) => newCard(owner, column.id, { title: `anchor of ${column.title}` })));

    const replies = await Promise.all(
      range(0, 11).map((i) => {
        const column = columns[i % 5]!;
        const body = i % 2 ? { target_column_id: column.id, before_id: others[i % 5]!.id } : { target_column_id: column.id };
        return call<CardView>('PATCH', `/cards/${card.id}/move`, { token: owner.token, body });
      }),
    );
    expect(outcomes(replies, 200)).toEqual(Array(12).fill(200));

    const tree = await readTree(owner, board.id);
    const listed = placements(tree).filter((p) => p.id === card.id);
    expect(listed).toHaveLength(1);
    const final = tree.columns.find((column) => column.id === listed[0]!.column)!.cards.find((c) => c.id === card.id)!;
    // The stored state is what one of the moves answered (the last writer wins, no mixture).
    expect(replies.map((reply) => reply.body)).toContainEqual(final);
    const got = await call<CardView>('GET', `/cards/${card.id}`, { token: owner.token });
    expect(got.body).toEqual(final);
    // Nothing else moved; every anchor is still where it was.
    expect(placements(tree)).toHaveLength(6);
    for (const anchor of others) expect(placements(tree)).toContainEqual({ id: anchor.id, column: anchor.column_id });
  });

  it('creates and moves at once in one column: no card lost or duplicated, every create distinct', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const source = await newColumn(owner, board.id, 'Source');
    const target = await newColumn(owner, board.id, 'Target');
    const incoming: CardView[] = [];
    for (let i = 0; i < 8; i++) incoming.push(await newCard(owner, source.id, { title: `in ${i}` }));
    const replies = await Promise.all([
      ...range(1, 10).map((i) =>
        call<CardView>('POST', `/columns/${target.id}/cards`, { token: owner.token, body: { title: `new ${i}` } }),
      ),
      ...incoming.map((card) =>
        call<CardView>('PATCH', `/cards/${card.id}/move`, { token: owner.token, body: { target_column_id: target.id } }),
      ),
    ]);
    const creates = replies.slice(0, 10);
    const moves = replies.slice(10);
    expect(outcomes(creates, 201)).toEqual(Array(10).fill(201));
    expect(outcomes(moves, 200)).toEqual(Array(8).fill(200));
    expect(new Set(creates.map((reply) => reply.body.position)).size).toBe(10);

    const tree = await readTree(owner, board.id);
    expect(tree.columns[0]!.cards).toEqual([]);
    const ids = tree.columns[1]!.cards.map((card) => card.id);
    expect(ids).toHaveLength(18);
    expect(new Set(ids)).toEqual(new Set([...creates, ...moves].map((reply) => reply.body.id)));
  });
  it('a move racing an edit answers with the title the card had when the move was written', async () => {
    // Which write landed first shows in the edit's answer: it reports the card's column as of
    // its own write. If the edit came first, the move (written later) must answer the new title.
    const owner = await newUser();
    const board = await newBoard(owner);
    const from = await newColumn(owner, board.id, 'From');
    const to = await newColumn(owner, board.id, 'To');
    let editFirst = 0;
    for (let round = 0; round < 25; round++) {
      const card = await newCard(owner, from.id, { title: `old ${round}` });
      const [edit, move] = await Promise.all([
        call<CardView>('PATCH', `/cards/${card.id}`, { token: owner.token, body: { title: `new ${round}` } }),
        call<CardView>('PATCH', `/cards/${card.id}/move`, { token: owner.token, body: { target_column_id: to.id } }),
      ]);
      expect([edit.status, move.status]).toEqual([200, 200]);
      if (edit.body.column_id === from.id) {
        editFirst++;
        expect(move.body.title).toBe(`new ${round}`);
      } else {
        expect(move.body.title).toBe(`old ${round}`);
      }
      expect(move.body.column_id).toBe(to.id);
    }
    // Both orders happen; the check above is about the one where the edit lands first.
    expect(editFirst).toBeGreaterThan(0);
  });
});
