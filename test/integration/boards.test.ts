import {
  type CardView,
  call,
  expectProblem,
  newBoard,
  newCard,
  newColumn,
  newUser,
  subjectOf,
  type TestUser,
  UUID,
  unknownId,
} from '../support/api';

/**
 * Spec part 4 "Boards" (rules 1-5), part 5 "Authorization", part 7 precedence, and the contract's
 * input rules, timestamps and deletion decisions, as a REST client sees them.
 */

interface BoardView {
  id: string;
  owner_id: string;
  title: string;
  created_at: string;
}

const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A Board of the spec: exactly its four fields, a UUID id, an ISO 8601 UTC timestamp with milliseconds. */
function expectBoard(body: unknown, expected: { owner_id: string; title: string }): BoardView {
  expect(body).toEqual({
    id: expect.any(String),
    owner_id: expected.owner_id,
    title: expected.title,
    created_at: expect.any(String),
  });
  const board = body as BoardView;
  expect(board.id).toMatch(UUID);
  expect(board.created_at).toMatch(ISO_MS_Z);
  expect(new Date(board.created_at).toISOString()).toBe(board.created_at);
  return board;
}

const getBoard = (user: TestUser, id: string) => call('GET', `/boards/${id}`, { token: user.token });
const renameBoard = (user: TestUser, id: string, body: unknown) => call('PATCH', `/boards/${id}`, { token: user.token, body });
const deleteBoard = (user: TestUser, id: string) => call('DELETE', `/boards/${id}`, { token: user.token });
const listBoards = async (user: TestUser) => {
  const reply = await call<BoardView[]>('GET', '/boards', { token: user.token });
  expect(reply.status).toBe(200);
  return reply.body;
};

/** The board as its owner reads it now: the tree must still be there, unchanged in its board fields. */
async function expectBoardUnchanged(owner: TestUser, board: BoardView) {
  const tree = await getBoard(owner, board.id);
  expect(tree.status).toBe(200);
  expect({ id: tree.body.id, owner_id: tree.body.owner_id, title: tree.body.title, created_at: tree.body.created_at }).toEqual(
    board,
  );
  expect(await listBoards(owner)).toContainEqual(board);
}

/** created_at has millisecond precision: make sure the next board gets a later one. */
async function nextMillisecond(after: string) {
  while (new Date().toISOString() <= after) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** A board with two columns of two cards each. */
async function populatedBoard(owner: TestUser) {
  const board = await newBoard(owner, 'Populated');
  const columns = [await newColumn(owner, board.id, 'Todo'), await newColumn(owner, board.id, 'Done')];
  const cards: CardView[] = [];
  for (const column of columns) {
    cards.push(await newCard(owner, column.id, { title: `${column.title} 1` }));
    cards.push(await newCard(owner, column.id, { title: `${column.title} 2`, description: 'details' }));
  }
  return { board, columns, cards };
}

describe('POST /boards', () => {
  it("answers 201 with the board, owned by the caller's sub, created_at as ISO 8601 UTC with milliseconds", async () => {
    const user = await newUser();
    const reply = await call('POST', '/boards', { token: user.token, body: { title: 'Roadmap' } });
    expect(reply.status).toBe(201);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    const board = expectBoard(reply.body, { owner_id: subjectOf(user.token), title: 'Roadmap' });
    expect(board.owner_id).toBe(user.id);
  });

  it('creates the board so that the creator can read it and finds it in their list', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Persisted');
    const tree = await getBoard(user, board.id);
    expect(tree.status).toBe(200);
    // A board with no change yet: seq 0 (realtime.md, "Sequence numbers and catching up").
    expect(tree.body).toEqual({ ...board, seq: 0, columns: [], labels: [] });
    expect(await listBoards(user)).toEqual([board]);
  });

  it('makes the creator the owner: the creator may delete the board', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    expect((await deleteBoard(user, board.id)).status).toBe(204);
  });

  it('gives every board its own id', async () => {
    const user = await newUser();
    const first = await newBoard(user, 'Same title');
    const second = await newBoard(user, 'Same title');
    expect(first.id).not.toBe(second.id);
  });

  it('ignores id, owner_id, created_at and columns sent in the body (no mass assignment)', async () => {
    const user = await newUser();
    const other = await newUser();
    const forgedId = unknownId();
    const reply = await call('POST', '/boards', {
      token: user.token,
      body: {
        title: 'Mine',
        id: forgedId,
        owner_id: other.id,
        created_at: '2001-01-01T00:00:00.000Z',
        columns: [{ title: 'Injected', cards: [] }],
      },
    });
    expect(reply.status).toBe(201);
    const board = expectBoard(reply.body, { owner_id: user.id, title: 'Mine' });
    expect(board.id).not.toBe(forgedId);
    expect(board.created_at).not.toBe('2001-01-01T00:00:00.000Z');

    expect((await getBoard(user, board.id)).body).toEqual({ ...board, seq: 0, columns: [], labels: [] });
    expect(await listBoards(user)).toEqual([board]);
    expect(await listBoards(other)).toEqual([]);
    expectProblem(await getBoard(other, board.id), 403);
    expectProblem(await getBoard(user, forgedId), 403);
  });

  describe('title rules', () => {
    it('accepts a title of exactly 256 characters and stores it as sent', async () => {
      const user = await newUser();
      const title = 't'.repeat(256);
      const reply = await call('POST', '/boards', { token: user.token, body: { title } });
      expect(reply.status).toBe(201);
      expectBoard(reply.body, { owner_id: user.id, title });
      expect((await getBoard(user, reply.body.id)).body.title).toBe(title);
    });

    it('stores a title with surrounding whitespace and non-ASCII characters exactly as sent', async () => {
      const user = await newUser();
      const title = '  Größe: 北京 ✓  ';
      const reply = await call('POST', '/boards', { token: user.token, body: { title } });
      expect(reply.status).toBe(201);
      expect(reply.body.title).toBe(title);
      expect((await getBoard(user, reply.body.id)).body.title).toBe(title);
      expect((await listBoards(user))[0]!.title).toBe(title);
    });

    const invalidTitles: [string, Record<string, unknown>][] = [
      ['an empty title', { title: '' }],
      ['a title of spaces only', { title: '    ' }],
      ['a title of tabs and newlines only', { title: '\t\n \r\n' }],
      ['a title of 257 characters', { title: 't'.repeat(257) }],
      ['a numeric title', { title: 42 }],
      ['a boolean title', { title: true }],
      ['a null title', { title: null }],
      ['an array title', { title: ['Roadmap'] }],
      ['an object title', { title: { text: 'Roadmap' } }],
      ['a missing title', {}],
      ['a missing title with other fields', { name: 'Roadmap' }],
    ];

    it.each(invalidTitles)('answers 400 problem+json for %s and creates nothing', async (_case, body) => {
      const user = await newUser();
      expectProblem(await call('POST', '/boards', { token: user.token, body }), 400);
      expect(await listBoards(user)).toEqual([]);
    });
  });
});

describe('GET /boards', () => {
  it('lists the caller’s boards newest first, as Board objects', async () => {
    const user = await newUser();
    const first = await newBoard(user, 'First');
    await nextMillisecond(first.created_at);
    const second = await newBoard(user, 'Second');
    await nextMillisecond(second.created_at);
    const third = await newBoard(user, 'Third');

    const list = await call('GET', '/boards', { token: user.token });
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toMatch(/^application\/json/);
    expect(list.body).toEqual([third, second, first]);
  });

  it('lists only boards the caller is a member of', async () => {
    const alice = await newUser();
    const bob = await newUser();
    const alices = await newBoard(alice, 'Alice');
    const bobs = await newBoard(bob, 'Bob');
    expect(await listBoards(alice)).toEqual([alices]);
    expect(await listBoards(bob)).toEqual([bobs]);
  });

  it('answers an empty array for a user without boards', async () => {
    const user = await newUser();
    await newBoard(await newUser(), 'Someone else');
    expect(await listBoards(user)).toEqual([]);
  });

  it('returns every board in one plain array, without pagination', async () => {
    const user = await newUser();
    const count = 60;
    const created = await Promise.all(Array.from({ length: count }, (_, i) => newBoard(user, `Board ${i}`)));
    const list = await call('GET', '/boards', { token: user.token });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.headers.get('link')).toBeNull();
    expect((list.body as BoardView[]).map((b) => b.id).sort()).toEqual(created.map((b) => b.id).sort());
    const stamps = (list.body as BoardView[]).map((b) => b.created_at);
    expect(stamps).toEqual([...stamps].sort().reverse());
  });
});

describe('GET /boards/{id}', () => {
  it('answers the board tree with an empty columns array for a new board', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Empty');
    const reply = await getBoard(user, board.id);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ ...board, seq: 0, columns: [], labels: [] });
  });

  it('answers the columns in ascending position, each with its cards in ascending position', async () => {
    const user = await newUser();
    const { board, columns, cards } = await populatedBoard(user);
    const [todo, done] = columns;
    const [todo1, todo2, done1, done2] = cards;
    // Move "Todo 2" in front of "Todo 1": the tree must follow position, not creation order.
    const moved = await call('PATCH', `/cards/${todo2!.id}/move`, {
      token: user.token,
      body: { target_column_id: todo!.id, after_id: todo1!.id },
    });
    expect(moved.status).toBe(200);

    const reply = await getBoard(user, board.id);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      ...board,
      // Two columns, four cards and the move: seven changes.
      seq: 7,
      columns: [
        { ...todo, cards: [moved.body, todo1] },
        { ...done, cards: [done1, done2] },
      ],
      labels: [],
    });
    const positions = (reply.body.columns as { position: number }[]).map((c) => c.position);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('answers 400 problem+json for a path id that is not a UUID', async () => {
    const user = await newUser();
    expectProblem(await getBoard(user, 'not-a-uuid'), 400);
    expectProblem(await getBoard(user, '12345'), 400);
    expectProblem(await getBoard(user, `${unknownId()}0`), 400);
  });
});

describe('PATCH /boards/{id}', () => {
  it('lets a member rename the board: 200 with the board, and the new title is persisted', async () => {
    const user = await newUser();
    const board = await newBoard(user, 'Old');
    const reply = await renameBoard(user, board.id, { title: 'New' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ ...board, title: 'New' });

    expect((await getBoard(user, board.id)).body).toEqual({ ...board, title: 'New', seq: 1, columns: [], labels: [] });
    expect(await listBoards(user)).toEqual([{ ...board, title: 'New' }]);
  });

  it('keeps the columns and cards of a renamed board', async () => {
    const user = await newUser();
    const { board } = await populatedBoard(user);
    const before = await getBoard(user, board.id);
    expect((await renameBoard(user, board.id, { title: 'Renamed' })).status).toBe(200);
    expect((await getBoard(user, board.id)).body).toEqual({ ...before.body, title: 'Renamed', seq: before.body.seq + 1 });
  });

  it('accepts a title of exactly 256 characters', async () => {
    const user = await newUser();
    const board = await newBoard(user);
    const title = 'r'.repeat(256);
    const reply = await renameBoard(user, board.id, { title });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...board, title });
    expect((await getBoard(user, board.id)).body.title).toBe(title);
  });

  it('ignores owner_id, id and created_at in the body (no mass assignment)', async () => {
    const owner = await newUser();
    const other = await newUser();
    const board = await newBoard(owner, 'Mine');
    const reply = await renameBoard(owner, board.id, {
      title: 'Still mine',
      owner_id: other.id,
      id: unknownId(),
      created_at: '2001-01-01T00:00:00.000Z',
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...board, title: 'Still mine' });

    expect((await getBoard(owner, board.id)).body).toEqual({ ...board, title: 'Still mine', seq: 1, columns: [], labels: [] });
    expect(await listBoards(other)).toEqual([]);
    expectProblem(await getBoard(other, board.id), 403);
    expectProblem(await deleteBoard(other, board.id), 403);
    expect((await deleteBoard(owner, board.id)).status).toBe(204);
  });

  const invalidTitles: [string, Record<string, unknown>][] = [
    ['an empty title', { title: '' }],
    ['a title of spaces only', { title: '   ' }],
    ['a title of 257 characters', { title: 'x'.repeat(257) }],
    ['a numeric title', { title: 7 }],
    ['a null title', { title: null }],
    ['an array title', { title: ['New'] }],
    ['a missing title', {}],
  ];

  it.each(invalidTitles)('answers 400 problem+json for %s and leaves the board unchanged', async (_case, body) => {
    const user = await newUser();
    const board = await newBoard(user, 'Unchanged');
    expectProblem(await renameBoard(user, board.id, body), 400);
    await expectBoardUnchanged(user, board);
  });

  it('answers 400 (not 403) to a non-member sending an invalid body: validation comes before any lookup', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const board = await newBoard(owner, 'Unchanged');
    expectProblem(await renameBoard(stranger, board.id, { title: '' }), 400);
    await expectBoardUnchanged(owner, board);
  });

  it('answers 400 problem+json for a path id that is not a UUID', async () => {
    const user = await newUser();
    expectProblem(await renameBoard(user, 'not-a-uuid', { title: 'New' }), 400);
  });
});

describe('DELETE /boards/{id}', () => {
  it('lets the owner delete: 204 with no body; afterwards the board is gone from the list and GET is 403', async () => {
    const owner = await newUser();
    const kept = await newBoard(owner, 'Kept');
    const board = await newBoard(owner, 'Doomed');
    const reply = await deleteBoard(owner, board.id);
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');

    expect(await listBoards(owner)).toEqual([kept]);
    // Contract: deleting a board removes its memberships, so the former owner is a non-member (403).
    expectProblem(await getBoard(owner, board.id), 403);
  });

  it('answers 403 to the former owner for GET, PATCH and a second DELETE of a deleted board', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Doomed');
    expect((await deleteBoard(owner, board.id)).status).toBe(204);

    expectProblem(await getBoard(owner, board.id), 403);
    expectProblem(await renameBoard(owner, board.id, { title: 'Revived?' }), 403);
    expectProblem(await deleteBoard(owner, board.id), 403);
    expectProblem(await call('POST', `/boards/${board.id}/columns`, { token: owner.token, body: { title: 'Late' } }), 403);
    expect(await listBoards(owner)).toEqual([]);
  });

  it('removes the columns and cards: every card and card creation on its columns is 404', async () => {
    const owner = await newUser();
    const { board, columns, cards } = await populatedBoard(owner);
    expect((await deleteBoard(owner, board.id)).status).toBe(204);

    for (const card of cards) {
      expectProblem(await call('GET', `/cards/${card.id}`, { token: owner.token }), 404);
      expectProblem(await call('PATCH', `/cards/${card.id}`, { token: owner.token, body: { title: 'Edited' } }), 404);
      expectProblem(
        await call('PATCH', `/cards/${card.id}/move`, { token: owner.token, body: { target_column_id: card.column_id } }),
        404,
      );
      expectProblem(await call('DELETE', `/cards/${card.id}`, { token: owner.token }), 404);
    }
    for (const column of columns) {
      expectProblem(await call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: 'Late' } }), 404);
    }
  });

  it('leaves the owner’s other boards, with their columns and cards, untouched', async () => {
    const owner = await newUser();
    const kept = await populatedBoard(owner);
    const doomed = await populatedBoard(owner);
    const before = await getBoard(owner, kept.board.id);
    expect((await deleteBoard(owner, doomed.board.id)).status).toBe(204);
    const after = await getBoard(owner, kept.board.id);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before.body);
    for (const card of kept.cards) {
      expect((await call('GET', `/cards/${card.id}`, { token: owner.token })).body).toEqual(card);
    }
  });

  it('answers 400 problem+json for a path id that is not a UUID', async () => {
    const user = await newUser();
    expectProblem(await deleteBoard(user, 'not-a-uuid'), 400);
  });
});

describe('a non-member of a board', () => {
  it('gets 403 on GET, and learns nothing about the board', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const board = await newBoard(owner, 'Private');
    const reply = await getBoard(stranger, board.id);
    expectProblem(reply, 403);
    expect(JSON.stringify(reply.body)).not.toContain('Private');
    expect(await listBoards(stranger)).toEqual([]);
  });

  it('gets 403 on PATCH, and the title is unchanged', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const board = await newBoard(owner, 'Private');
    expectProblem(await renameBoard(stranger, board.id, { title: 'Hijacked' }), 403);
    await expectBoardUnchanged(owner, board);
  });

  it('gets 403 on DELETE, and the board still exists with its cards', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const { board, cards } = await populatedBoard(owner);
    const before = await getBoard(owner, board.id);
    expectProblem(await deleteBoard(stranger, board.id), 403);
    const after = await getBoard(owner, board.id);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before.body);
    expect((await call('GET', `/cards/${cards[0]!.id}`, { token: owner.token })).status).toBe(200);
  });

  it('gets 403 on adding a column, and no column is added', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const board = await newBoard(owner, 'Private');
    expectProblem(await call('POST', `/boards/${board.id}/columns`, { token: stranger.token, body: { title: 'Sneaky' } }), 403);
    expect((await getBoard(owner, board.id)).body.columns).toEqual([]);
  });

  it('gets 403, not 404, for a board id that does not exist (GET, PATCH, DELETE, add column)', async () => {
    const user = await newUser();
    await newBoard(user); // the caller is a member of some board, just not of this id
    const id = unknownId();
    expectProblem(await getBoard(user, id), 403);
    expectProblem(await renameBoard(user, id, { title: 'Ghost' }), 403);
    expectProblem(await deleteBoard(user, id), 403);
    expectProblem(await call('POST', `/boards/${id}/columns`, { token: user.token, body: { title: 'Ghost' } }), 403);
  });

  it('gets the same 403 problem for an existing board as for a nonexistent one (no existence probing)', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const board = await newBoard(owner);
    const existing = expectProblem(await getBoard(stranger, board.id), 403);
    const missing = expectProblem(await getBoard(stranger, unknownId()), 403);
    expect({ title: missing.title, detail: missing.detail, type: missing.type }).toEqual({
      title: existing.title,
      detail: existing.detail,
      type: existing.type,
    });
  });
});
