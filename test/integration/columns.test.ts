import { randomUUID } from 'node:crypto';
import {
  type ColumnView,
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

const postColumn = (user: TestUser, boardId: string, body: unknown) =>
  call<ColumnView>('POST', `/boards/${boardId}/columns`, { token: user.token, body });

// --- tests ---------------------------------------------------------------------------------------

describe('POST /boards/{id}/columns', () => {
  it('answers 201 with exactly the Column fields', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const reply = await postColumn(owner, board.id, { title: 'To do' });
    expect(reply.status).toBe(201);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ id: expect.stringMatching(UUID), board_id: board.id, title: 'To do', position: 1 });
    expect(Object.keys(reply.body).sort()).toEqual(['board_id', 'id', 'position', 'title']);
  });

  it('puts the first column at 1.0 and each next one at the highest position + 1.0', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const positions: number[] = [];
    for (const title of ['To do', 'Doing', 'Review', 'Done']) positions.push((await newColumn(owner, board.id, title)).position);
    expect(positions).toEqual([1, 2, 3, 4]);
  });

  it('gives every column its own id', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const a = await newColumn(owner, board.id, 'Same');
    const b = await newColumn(owner, board.id, 'Same');
    expect(a.id).not.toBe(b.id);
  });

  it('keeps the positions of different boards apart', async () => {
    const owner = await newUser();
    const first = await newBoard(owner, 'First');
    const second = await newBoard(owner, 'Second');
    await newColumn(owner, first.id);
    await newColumn(owner, first.id);
    expect((await newColumn(owner, second.id)).position).toBe(1);
    expect((await newColumn(owner, first.id)).position).toBe(3);
  });

  it('stores the title as sent (surrounding whitespace, unicode, 256 characters)', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    for (const title of ['  Doing  ', 'Fertig ✅ 完成', 'x'.repeat(256)]) {
      const reply = await postColumn(owner, board.id, { title });
      expect(reply.status).toBe(201);
      expect(reply.body.title).toBe(title);
    }
    const tree = await readTree(owner, board.id);
    expect(tree.columns.map((c) => c.title)).toEqual(['  Doing  ', 'Fertig ✅ 完成', 'x'.repeat(256)]);
  });

  it('ignores id, board_id and position in the body', async () => {
    const owner = await newUser();
    const board = await newBoard(owner);
    const other = await newBoard(owner, 'Other');
    await newColumn(owner, board.id);
    const forcedId = randomUUID();
    const reply = await postColumn(owner, board.id, { title: 'Sneaky', id: forcedId, board_id: other.id, position: -50 });
    expect(reply.status).toBe(201);
    expect(reply.body.id).not.toBe(forcedId);
    expect(reply.body.board_id).toBe(board.id);
    expect(reply.body.position).toBe(2);
    expect((await readTree(owner, other.id)).columns).toEqual([]);
    expect((await readTree(owner, board.id)).columns.map((c) => c.id)).toContain(reply.body.id);
  });

  describe('access', () => {
    it('a stranger gets 403 and nothing is created', async () => {
      const owner = await newUser();
      const stranger = await newUser();
      const board = await newBoard(owner);
      await newColumn(owner, board.id);
      expectProblem(await postColumn(stranger, board.id, { title: 'Intruder' }), 403);
      const tree = await readTree(owner, board.id);
      expect(tree.columns).toHaveLength(1);
      // The next column of the owner is still the second one.
      expect((await newColumn(owner, board.id)).position).toBe(2);
    });

    it('a stranger naming a board that does not exist gets 403, not 404', async () => {
      const stranger = await newUser();
      expectProblem(await postColumn(stranger, unknownId(), { title: 'Nowhere' }), 403);
    });

    it('the former owner of a deleted board is a non-member of that id: 403', async () => {
      const owner = await newUser();
      const board = await newBoard(owner);
      await newColumn(owner, board.id);
      expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
      expectProblem(await postColumn(owner, board.id, { title: 'After delete' }), 403);
      expectProblem(await call('GET', `/boards/${board.id}`, { token: owner.token }), 403);
    });

    it('a column of a deleted board is gone: creating a card in it is 404', async () => {
      const owner = await newUser();
      const board = await newBoard(owner);
      const column = await newColumn(owner, board.id);
      await newCard(owner, column.id);
      expect((await call('DELETE', `/boards/${board.id}`, { token: owner.token })).status).toBe(204);
      expectProblem(await call('POST', `/columns/${column.id}/cards`, { token: owner.token, body: { title: 'x' } }), 404);
    });

    it('needs a bearer token: 401', async () => {
      const owner = await newUser();
      const board = await newBoard(owner);
      const reply = await call('POST', `/boards/${board.id}/columns`, { body: { title: 'Anonymous' } });
      expectProblem(reply, 401);
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await readTree(owner, board.id)).columns).toEqual([]);
    });
  });

  describe('validation (400 before any lookup)', () => {
    const invalid: [string, unknown][] = [
      ['missing title', {}],
      ['empty title', { title: '' }],
      ['whitespace-only title', { title: ' \t\n ' }],
      ['title of 257 characters', { title: 'x'.repeat(257) }],
      ['numeric title', { title: 7 }],
      ['null title', { title: null }],
      ['array title', { title: ['a'] }],
    ];

    it.each(invalid)('%s is 400 and creates nothing', async (_, body) => {
      const owner = await newUser();
      const board = await newBoard(owner);
      expectProblem(await postColumn(owner, board.id, body), 400);
      expect((await readTree(owner, board.id)).columns).toEqual([]);
    });

    it('a body that is not a JSON object is 400', async () => {
      const owner = await newUser();
      const board = await newBoard(owner);
      for (const rawBody of ['{"title": ', '["title"]', '"title"', 'null']) {
        const reply = await call('POST', `/boards/${board.id}/columns`, {
          token: owner.token,
          rawBody,
          headers: { 'content-type': 'application/json' },
        });
        expectProblem(reply, 400);
      }
      expect((await readTree(owner, board.id)).columns).toEqual([]);
    });

    it('a board id that is not a UUID is 400', async () => {
      const owner = await newUser();
      expectProblem(await postColumn(owner, 'not-a-uuid', { title: 'x' }), 400);
    });

    it('a malformed body is 400 even for a stranger on a board that does not exist', async () => {
      const stranger = await newUser();
      expectProblem(await postColumn(stranger, unknownId(), { title: '' }), 400);
    });
  });

  describe('in the board tree', () => {
    it('lists the columns by ascending position, each with an empty cards array', async () => {
      const owner = await newUser();
      const board = await newBoard(owner);
      const created: ColumnView[] = [];
      for (const title of ['C', 'A', 'B']) created.push(await newColumn(owner, board.id, title));
      const tree = await readTree(owner, board.id);
      expect(tree.columns).toEqual(created.map((column) => ({ ...column, cards: [] })));
      const positions = tree.columns.map((c) => c.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      for (const column of tree.columns) {
        expect(Object.keys(column).sort()).toEqual(['board_id', 'cards', 'id', 'position', 'title']);
      }
    });

    it('cannot be read by a stranger (403)', async () => {
      const owner = await newUser();
      const stranger = await newUser();
      const board = await newBoard(owner);
      await newColumn(owner, board.id);
      expectProblem(await call('GET', `/boards/${board.id}`, { token: stranger.token }), 403);
    });
  });
});
