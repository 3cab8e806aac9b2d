import { randomUUID } from 'node:crypto';
import {
  CARD_FIELDS,
  type CardView,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  readTree,
  type TestUser,
  UUID,
  unknownId,
} from '../support/api';

// --- helpers -------------------------------------------------------------------------------------

const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A user with a board and one column on it. */
async function setup() {
  const owner = await newUser();
  const board = await newBoard(owner);
  const column = await newColumn(owner, board.id, 'To do');
  return { owner, board, column };
}

const postCard = (user: TestUser, columnId: string, body: unknown) =>
  call<CardView>('POST', `/columns/${columnId}/cards`, { token: user.token, body });
const getCard = (user: TestUser, id: string) => call<CardView>('GET', `/cards/${id}`, { token: user.token });
const patchCard = (user: TestUser, id: string, body: unknown) =>
  call<CardView>('PATCH', `/cards/${id}`, { token: user.token, body });
const deleteCard = (user: TestUser, id: string) => call('DELETE', `/cards/${id}`, { token: user.token });

async function moveCard(user: TestUser, id: string, body: Record<string, unknown>) {
  const reply = await call<CardView>('PATCH', `/cards/${id}/move`, { token: user.token, body });
  expect(reply.status).toBe(200);
  return reply.body;
}

/** The card as GET /cards/{id} shows it now (must be 200). */
async function current(user: TestUser, id: string) {
  const reply = await getCard(user, id);
  expect(reply.status).toBe(200);
  return reply.body;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** The contract's order: position, then created_at, then id. */
const treeOrder = (a: CardView, b: CardView) =>
  a.position - b.position || byText(a.created_at, b.created_at) || byText(a.id, b.id);

// --- tests ---------------------------------------------------------------------------------------

describe('POST /columns/{id}/cards', () => {
  it('answers 201 with exactly the Card fields', async () => {
    const { owner, column } = await setup();
    const reply = await postCard(owner, column.id, { title: 'Write tests', description: 'all of them' });
    expect(reply.status).toBe(201);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({
      id: expect.stringMatching(UUID),
      column_id: column.id,
      title: 'Write tests',
      description: 'all of them',
      position: 1,
      created_at: expect.stringMatching(ISO_UTC_MS),
      label_ids: [],
      due_at: null,
      assignee_ids: [],
      archived_at: null,
      comment_count: 0,
    });
    expect(Object.keys(reply.body).sort()).toEqual(CARD_FIELDS);
    expect(await current(owner, reply.body.id)).toEqual(reply.body);
  });

  it('puts the first card at 1.0 and each next one at the highest position + 1.0', async () => {
    const { owner, column } = await setup();
    const positions: number[] = [];
    for (let i = 0; i < 4; i++) positions.push((await newCard(owner, column.id, { title: `card ${i}` })).position);
    expect(positions).toEqual([1, 2, 3, 4]);
  });

  it('an omitted description and a null description are both stored as null', async () => {
    const { owner, column } = await setup();
    const omitted = await postCard(owner, column.id, { title: 'no description' });
    const sentNull = await postCard(owner, column.id, { title: 'null description', description: null });
    expect([omitted.status, sentNull.status]).toEqual([201, 201]);
    expect(omitted.body.description).toBeNull();
    expect(sentNull.body.description).toBeNull();
    expect((await current(owner, omitted.body.id)).description).toBeNull();
    expect((await current(owner, sentNull.body.id)).description).toBeNull();
    const tree = await readTree(owner, column.board_id);
    expect(tree.columns[0]!.cards.map((c) => c.description)).toEqual([null, null]);
  });

  it('an empty description is a string, not null', async () => {
    const { owner, column } = await setup();
    const reply = await postCard(owner, column.id, { title: 't', description: '' });
    expect(reply.status).toBe(201);
    expect(reply.body.description).toBe('');
    expect((await current(owner, reply.body.id)).description).toBe('');
  });

  it('stores title and description as sent', async () => {
    const { owner, column } = await setup();
    const body = { title: '  spaced  ', description: '  line one\nline two ✅ 完成  ' };
    const reply = await postCard(owner, column.id, body);
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject(body);
    expect(await current(owner, reply.body.id)).toMatchObject(body);
  });

  describe('position after cards left or joined the column', () => {
    it('the top card moved to another column: the next card gets the new highest + 1.0', async () => {
      const { owner, board, column } = await setup();
      const other = await newColumn(owner, board.id, 'Other');
      await newCard(owner, column.id, { title: '1' });
      await newCard(owner, column.id, { title: '2' });
      const top = await newCard(owner, column.id, { title: '3' });
      await moveCard(owner, top.id, { target_column_id: other.id });
      expect((await newCard(owner, column.id, { title: 'next' })).position).toBe(3);
    });

    it('the top card moved down inside the column: the next card gets the new highest + 1.0', async () => {
      const { owner, column } = await setup();
      const first = await newCard(owner, column.id, { title: '1' });
      const second = await newCard(owner, column.id, { title: '2' });
      const top = await newCard(owner, column.id, { title: '3' });
      const moved = await moveCard(owner, top.id, { target_column_id: column.id, before_id: first.id, after_id: second.id });
      expect(moved.position).toBe(1.5);
      expect((await newCard(owner, column.id, { title: 'next' })).position).toBe(3);
    });

    it('a card moved in above the top: the next card goes above it', async () => {
      const { owner, board, column } = await setup();
      const other = await newColumn(owner, board.id, 'Other');
      const top = await newCard(owner, column.id, { title: '1' });
      const incoming = await newCard(owner, other.id, { title: 'incoming' });
      const moved = await moveCard(owner, incoming.id, { target_column_id: column.id, before_id: top.id });
      expect(moved.position).toBe(2);
      expect((await newCard(owner, column.id, { title: 'next' })).position).toBe(3);
      // The column the card came from is empty again.
      expect((await newCard(owner, other.id, { title: 'fresh' })).position).toBe(1);
    });

    it('a fractional highest position: + 1.0 from it', async () => {
      const { owner, board, column } = await setup();
      const other = await newColumn(owner, board.id, 'Other');
      const a = await newCard(owner, column.id, { title: 'a' });
      const b = await newCard(owner, column.id, { title: 'b' });
      const y = await newCard(owner, other.id, { title: 'y' });
      expect((await moveCard(owner, y.id, { target_column_id: column.id, before_id: a.id, after_id: b.id })).position).toBe(1.5);
      await moveCard(owner, b.id, { target_column_id: other.id });
      expect((await newCard(owner, column.id, { title: 'c' })).position).toBe(2.5);
    });

    it('every card moved out: the next card is 1.0 again', async () => {
      const { owner, board, column } = await setup();
      const other = await newColumn(owner, board.id, 'Other');
      const a = await newCard(owner, column.id, { title: 'a' });
      const b = await newCard(owner, column.id, { title: 'b' });
      await moveCard(owner, a.id, { target_column_id: other.id });
      await moveCard(owner, b.id, { target_column_id: other.id });
      expect((await newCard(owner, column.id, { title: 'c' })).position).toBe(1);
    });

    it('only cards below zero: highest + 1.0 even when that is not 1.0', async () => {
      const { owner, column } = await setup();
      const a = await newCard(owner, column.id, { title: 'a' });
      const b = await newCard(owner, column.id, { title: 'b' });
      expect((await moveCard(owner, b.id, { target_column_id: column.id, after_id: a.id })).position).toBe(0);
      expect((await moveCard(owner, a.id, { target_column_id: column.id, after_id: b.id })).position).toBe(-1);
      expect((await moveCard(owner, b.id, { target_column_id: column.id, after_id: a.id })).position).toBe(-2);
      expect((await newCard(owner, column.id, { title: 'c' })).position).toBe(0);
    });

    it('the top card deleted: the next card gets the new highest + 1.0', async () => {
      const { owner, column } = await setup();
      await newCard(owner, column.id, { title: '1' });
      const top = await newCard(owner, column.id, { title: '2' });
      expect((await deleteCard(owner, top.id)).status).toBe(204);
      expect((await newCard(owner, column.id, { title: 'next' })).position).toBe(2);
    });
  });

  describe('access and existence', () => {
    it('a column that does not exist is 404, for a member of some board and for a stranger alike', async () => {
      const { owner } = await setup();
      const stranger = await newUser();
      expectProblem(await postCard(owner, unknownId(), { title: 'x' }), 404);
      expectProblem(await postCard(stranger, unknownId(), { title: 'x' }), 404);
    });

    it('a stranger on an existing column gets 403 and nothing is created', async () => {
      const { owner, column } = await setup();
      const stranger = await newUser();
      await newCard(owner, column.id, { title: 'mine' });
      expectProblem(await postCard(stranger, column.id, { title: 'intruder' }), 403);
      const tree = await readTree(owner, column.board_id);
      expect(tree.columns[0]!.cards.map((c) => c.title)).toEqual(['mine']);
      expect((await newCard(owner, column.id, { title: 'next' })).position).toBe(2);
    });
  });

  it('ignores id, column_id, board_id, position and created_at in the body', async () => {
    const { owner, board, column } = await setup();
    const otherBoard = await newBoard(owner, 'Other board');
    const otherColumn = await newColumn(owner, otherBoard.id, 'Other column');
    const forcedId = randomUUID();
    const reply = await postCard(owner, column.id, {
      title: 'sneaky',
      id: forcedId,
      column_id: otherColumn.id,
      board_id: otherBoard.id,
      position: 99.5,
      created_at: '2000-01-01T00:00:00.000Z',
    });
    expect(reply.status).toBe(201);
    expect(reply.body.id).not.toBe(forcedId);
    expect(reply.body.column_id).toBe(column.id);
    expect(reply.body.position).toBe(1);
    expect(reply.body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
    expect(Object.keys(reply.body).sort()).toEqual(CARD_FIELDS);
    expectProblem(await getCard(owner, forcedId), 404);
    expect((await readTree(owner, otherBoard.id)).columns[0]!.cards).toEqual([]);
    expect((await readTree(owner, board.id)).columns[0]!.cards).toEqual([reply.body]);
  });

  describe('limits and types (400, nothing created)', () => {
    it('title of 256 characters and description of 16384 characters are accepted', async () => {
      const { owner, column } = await setup();
      const body = { title: 't'.repeat(256), description: 'd'.repeat(16_384) };
      const reply = await postCard(owner, column.id, body);
      expect(reply.status).toBe(201);
      expect(reply.body).toMatchObject(body);
      expect(await current(owner, reply.body.id)).toMatchObject(body);
    });

    it('limits count characters, not UTF-16 units: 256 emoji are accepted, 257 are not', async () => {
      const { owner, column } = await setup();
      const ok = await postCard(owner, column.id, { title: '😀'.repeat(256) });
      expect(ok.status).toBe(201);
      expect(ok.body.title).toBe('😀'.repeat(256));
      expectProblem(await postCard(owner, column.id, { title: '😀'.repeat(257) }), 400);
      const cjk = await postCard(owner, column.id, { title: 't', description: '字'.repeat(16_384) });
      expect(cjk.status).toBe(201);
      expectProblem(await postCard(owner, column.id, { title: 't', description: '字'.repeat(16_385) }), 400);
    });

    const invalid: [string, unknown][] = [
      ['missing title', { description: 'd' }],
      ['empty title', { title: '' }],
      ['whitespace-only title', { title: '   ' }],
      ['title of 257 characters', { title: 't'.repeat(257) }],
      ['description of 16385 characters', { title: 't', description: 'd'.repeat(16_385) }],
      ['numeric title', { title: 1 }],
      ['boolean title', { title: true }],
      ['null title', { title: null }],
      ['object title', { title: { text: 'x' } }],
      ['numeric description', { title: 't', description: 5 }],
      ['array description', { title: 't', description: ['d'] }],
    ];

    it.each(invalid)('%s', async (_, body) => {
      const { owner, column } = await setup();
      expectProblem(await postCard(owner, column.id, body), 400);
      expect((await readTree(owner, column.board_id)).columns[0]!.cards).toEqual([]);
    });

    it('a body that is not a JSON object is 400', async () => {
      const { owner, column } = await setup();
      for (const rawBody of ['{', '[]', '"t"', '42', 'null']) {
        const reply = await call('POST', `/columns/${column.id}/cards`, {
          token: owner.token,
          rawBody,
          headers: { 'content-type': 'application/json' },
        });
        expectProblem(reply, 400);
      }
      expect((await readTree(owner, column.board_id)).columns[0]!.cards).toEqual([]);
    });

    it('a column id that is not a UUID is 400', async () => {
      const { owner } = await setup();
      expectProblem(await postCard(owner, 'column-1', { title: 'x' }), 400);
    });

    it('a malformed body is 400 before the column is looked up', async () => {
      const stranger = await newUser();
      expectProblem(await postCard(stranger, unknownId(), { title: '' }), 400);
    });
  });
});

describe('GET, PATCH, DELETE /cards/{id}: order of checks', () => {
  it('a card that does not exist is 404 for a member of some board and for a stranger alike', async () => {
    const { owner } = await setup();
    const stranger = await newUser();
    for (const user of [owner, stranger]) {
      const id = unknownId();
      expectProblem(await getCard(user, id), 404);
      expectProblem(await patchCard(user, id, { title: 'x' }), 404);
      expectProblem(await deleteCard(user, id), 404);
    }
  });

  it('a stranger on an existing card gets 403, and the card is unchanged', async () => {
    const { owner, column } = await setup();
    const stranger = await newUser();
    const card = await newCard(owner, column.id, { title: 'private', description: 'secret' });
    const getReply = await getCard(stranger, card.id);
    expectProblem(getReply, 403);
    expect(JSON.stringify(getReply.body)).not.toContain('secret');
    expectProblem(await patchCard(stranger, card.id, { title: 'hijacked', description: 'gone' }), 403);
    expectProblem(await deleteCard(stranger, card.id), 403);
    expect(await current(owner, card.id)).toEqual(card);
  });

  it('a member of another board is a stranger to this card (403)', async () => {
    const { owner, column } = await setup();
    const { owner: other } = await setup();
    const card = await newCard(owner, column.id);
    expectProblem(await getCard(other, card.id), 403);
    expectProblem(await patchCard(other, card.id, {}), 403);
    expectProblem(await deleteCard(other, card.id), 403);
  });

  it('a card of a deleted board is 404 for its former owner and for a stranger (its column is gone)', async () => {
    const { owner, board, column } = await setup();
    const stranger = await newUser();
    const card = await newCard(owner, column.id);
    expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
    for (const user of [owner, stranger]) {
      expectProblem(await getCard(user, card.id), 404);
      expectProblem(await patchCard(user, card.id, { title: 'x' }), 404);
      expectProblem(await deleteCard(user, card.id), 404);
    }
  });

  it('a card id that is not a UUID is 400', async () => {
    const { owner } = await setup();
    expectProblem(await getCard(owner, 'card-1'), 400);
    expectProblem(await patchCard(owner, 'card-1', { title: 'x' }), 400);
    expectProblem(await deleteCard(owner, '1234'), 400);
  });

  it('needs a bearer token: 401', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id);
    expectProblem(await call('GET', `/cards/${card.id}`), 401);
    expectProblem(await call('PATCH', `/cards/${card.id}`, { body: { title: 'x' } }), 401);
    expectProblem(await call('DELETE', `/cards/${card.id}`), 401);
    expect(await current(owner, card.id)).toEqual(card);
  });
});

describe('GET /cards/{id}', () => {
  it('returns the card as created', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'read me', description: 'details' });
    const reply = await getCard(owner, card.id);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(card);
    expect(Object.keys(reply.body).sort()).toEqual(CARD_FIELDS);
  });
  it('accepts the id in upper case (UUIDs are case-insensitive) and answers with the issued id', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'case' });
    const reply = await getCard(owner, card.id.toUpperCase());
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(card);
    const created = await postCard(owner, column.id.toUpperCase(), { title: 'upper column id' });
    expect(created.status).toBe(201);
    expect(created.body.column_id).toBe(column.id);
  });
});

describe('PATCH /cards/{id}', () => {
  it('changes only the title when only the title is sent', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'old', description: 'keep me' });
    const reply = await patchCard(owner, card.id, { title: 'new' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...card, title: 'new' });
    expect(await current(owner, card.id)).toEqual({ ...card, title: 'new' });
  });

  it('changes only the description when only the description is sent', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'keep me' });
    const reply = await patchCard(owner, card.id, { description: 'now set' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...card, description: 'now set' });
    expect(await current(owner, card.id)).toEqual({ ...card, description: 'now set' });
  });

  it('changes both when both are sent', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'a', description: 'b' });
    const reply = await patchCard(owner, card.id, { title: 'A', description: 'B' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...card, title: 'A', description: 'B' });
    expect(await current(owner, card.id)).toEqual(reply.body);
  });

  it('an empty body {} changes nothing and returns the card', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'same', description: 'same too' });
    const reply = await patchCard(owner, card.id, {});
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(card);
    expect(await current(owner, card.id)).toEqual(card);
  });

  it('{title: null, description: null} changes nothing and returns the card', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'same', description: 'same too' });
    const reply = await patchCard(owner, card.id, { title: null, description: null });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(card);
    expect(await current(owner, card.id)).toEqual(card);
  });

  it('a null field is left alone while the other one changes', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'old', description: 'kept' });
    const first = await patchCard(owner, card.id, { title: 'new', description: null });
    expect(first.body).toEqual({ ...card, title: 'new' });
    const second = await patchCard(owner, card.id, { title: null, description: 'changed' });
    expect(second.body).toEqual({ ...card, title: 'new', description: 'changed' });
    expect(await current(owner, card.id)).toEqual(second.body);
  });

  it('a description cannot be cleared back to null', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 't' });
    expect((await patchCard(owner, card.id, { description: 'set once' })).status).toBe(200);
    const reply = await patchCard(owner, card.id, { description: null });
    expect(reply.status).toBe(200);
    expect(reply.body.description).toBe('set once');
    expect((await current(owner, card.id)).description).toBe('set once');
  });

  it('{} on a card that never had a description keeps it null', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 't' });
    expect((await patchCard(owner, card.id, {})).body.description).toBeNull();
    expect((await patchCard(owner, card.id, { description: null })).body.description).toBeNull();
    expect((await current(owner, card.id)).description).toBeNull();
  });

  it('ignores id, column_id, board_id, position and created_at in the body', async () => {
    const { owner, board, column } = await setup();
    const otherColumn = await newColumn(owner, board.id, 'Other');
    const card = await newCard(owner, column.id, { title: 't' });
    const reply = await patchCard(owner, card.id, {
      title: 'renamed',
      id: randomUUID(),
      column_id: otherColumn.id,
      board_id: unknownId(),
      position: 42,
      created_at: '2000-01-01T00:00:00.000Z',
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...card, title: 'renamed' });
    expect(await current(owner, card.id)).toEqual({ ...card, title: 'renamed' });
    const tree = await readTree(owner, board.id);
    expect(tree.columns.map((c) => c.cards.map((x) => x.id))).toEqual([[card.id], []]);
  });

  it('a body with only unknown fields changes nothing', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 't', description: 'd' });
    const reply = await patchCard(owner, card.id, { position: 7, column_id: unknownId() });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(card);
  });

  it('does not move the card: position and column survive a rename', async () => {
    const { owner, column } = await setup();
    await newCard(owner, column.id, { title: 'first' });
    const card = await newCard(owner, column.id, { title: 'second' });
    const reply = await patchCard(owner, card.id, { title: 'second, renamed' });
    expect(reply.body.position).toBe(2);
    expect(reply.body.column_id).toBe(column.id);
  });

  it('title of 256 and description of 16384 characters are accepted', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 't' });
    const body = { title: 'T'.repeat(256), description: 'D'.repeat(16_384) };
    const reply = await patchCard(owner, card.id, body);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...card, ...body });
  });

  const invalid: [string, unknown][] = [
    ['empty title', { title: '' }],
    ['whitespace-only title', { title: '  \t ' }],
    ['title of 257 characters', { title: 'T'.repeat(257) }],
    ['description of 16385 characters', { description: 'D'.repeat(16_385) }],
    ['numeric title', { title: 3 }],
    ['boolean description', { description: false }],
    ['object description', { description: { text: 'x' } }],
    ['valid title with an invalid description', { title: 'fine', description: 9 }],
  ];

  it.each(invalid)('%s is 400 and changes nothing', async (_, body) => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'orig', description: 'orig' });
    expectProblem(await patchCard(owner, card.id, body), 400);
    expect(await current(owner, card.id)).toEqual(card);
  });

  it('a body that is not a JSON object is 400 and changes nothing', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id, { title: 'orig' });
    for (const rawBody of ['{"title":', '["title"]', 'null', '']) {
      const reply = await call('PATCH', `/cards/${card.id}`, {
        token: owner.token,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(reply, 400);
    }
    expect(await current(owner, card.id)).toEqual(card);
  });

  it('a malformed body is 400 before the card is looked up', async () => {
    const stranger = await newUser();
    expectProblem(await patchCard(stranger, unknownId(), { title: 5 }), 400);
  });
});

describe('DELETE /cards/{id}', () => {
  it('answers 204 with no body; afterwards GET is 404 and a second DELETE is 404', async () => {
    const { owner, column } = await setup();
    const card = await newCard(owner, column.id);
    const reply = await deleteCard(owner, card.id);
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');
    expectProblem(await getCard(owner, card.id), 404);
    expectProblem(await deleteCard(owner, card.id), 404);
    expectProblem(await patchCard(owner, card.id, { title: 'ghost' }), 404);
  });

  it('removes the card from the tree and leaves the others', async () => {
    const { owner, board, column } = await setup();
    const a = await newCard(owner, column.id, { title: 'a' });
    const b = await newCard(owner, column.id, { title: 'b' });
    const c = await newCard(owner, column.id, { title: 'c' });
    expect((await deleteCard(owner, b.id)).status).toBe(204);
    const tree = await readTree(owner, board.id);
    expect(tree.columns[0]!.cards).toEqual([a, c]);
  });

  it('a card of a deleted board answers 404 to its former owner', async () => {
    const { owner, board, column } = await setup();
    const card = await newCard(owner, column.id);
    expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await deleteCard(owner, card.id), 404);
  });
});

describe('cards in the board tree', () => {
  it('each column lists its own cards, by ascending position, as GET /cards shows them', async () => {
    const { owner, board, column } = await setup();
    const second = await newColumn(owner, board.id, 'Doing');
    const a = await newCard(owner, column.id, { title: 'a', description: 'x' });
    const b = await newCard(owner, column.id, { title: 'b' });
    const c = await newCard(owner, second.id, { title: 'c' });
    const d = await newCard(owner, column.id, { title: 'd' });
    // d to the top of its column: after_id a -> 0.
    const movedD = await moveCard(owner, d.id, { target_column_id: column.id, after_id: a.id });
    expect(movedD.position).toBe(0);
    const tree = await readTree(owner, board.id);
    expect(tree.columns.map((col) => col.id)).toEqual([column.id, second.id]);
    expect(tree.columns[0]!.cards).toEqual([movedD, a, b]);
    expect(tree.columns[1]!.cards).toEqual([c]);
    for (const col of tree.columns) {
      for (const card of col.cards) {
        expect(card.column_id).toBe(col.id);
        expect(Object.keys(card).sort()).toEqual(CARD_FIELDS);
        expect(await current(owner, card.id)).toEqual(card);
      }
    }
  });

  it('breaks ties on position by created_at, then by id', async () => {
    const { owner, board, column } = await setup();
    // Cards created at once often share a created_at millisecond; ids then decide.
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => postCard(owner, column.id, { title: `burst ${i}` })));
    expect(burst.map((r) => r.status)).toEqual(Array(8).fill(201));
    const serial = [await newCard(owner, column.id, { title: 's1' }), await newCard(owner, column.id, { title: 's2' })];
    const cards = [...burst.map((r) => r.body), ...serial];
    // Every card but the last to the same position: a move with no neighbours gives 1.0.
    const moved = new Map<string, CardView>();
    for (const card of cards.slice(0, -1)) moved.set(card.id, await moveCard(owner, card.id, { target_column_id: column.id }));
    const last = cards.at(-1)!;
    // The last one below them all: 0.
    moved.set(last.id, await moveCard(owner, last.id, { target_column_id: column.id, after_id: cards[0]!.id }));
    const expected = [...moved.values()].sort(treeOrder);
    expect(expected[0]!.id).toBe(last.id);
    expect(expected.slice(1).every((c) => c.position === 1)).toBe(true);

    const first = await readTree(owner, board.id);
    expect(first.columns[0]!.cards).toEqual(expected);
    // Stable between reads.
    const again = await readTree(owner, board.id);
    expect(again.columns[0]!.cards.map((c) => c.id)).toEqual(expected.map((c) => c.id));
  });
});
