import { call, newBoard, newColumn, newUser, readTree } from '../support/api';

/**
 * A board bigger than one DynamoDB query page (1 MB): the tree is read as a first page and then
 * parallel key ranges (lib/data/boards.ts). Every card must come back exactly once, in order.
 */
describe('GET /boards/{id} on a board over 1 MB', () => {
  it('returns every card once, each column in position order', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Big');
    const description = 'd'.repeat(1024);
    const columns = await Promise.all(Array.from({ length: 8 }, (_, i) => newColumn(owner, board.id, `Column ${i}`)));
    const perColumn = 130;
    // One writer per column (creates in one column are serialised), the columns in parallel.
    const created = await Promise.all(
      columns.map(async (column) => {
        const ids: string[] = [];
        for (let n = 0; n < perColumn; n++) {
          const reply = await call('POST', `/columns/${column.id}/cards`, {
            token: owner.token,
            body: { title: `Card ${n}`, description },
          });
          expect(reply.status).toBe(201);
          ids.push(reply.body.id);
        }
        return ids;
      }),
    );

    const tree = await readTree(owner, board.id);
    expect(JSON.stringify(tree).length).toBeGreaterThan(1024 * 1024);
    // The columns were created concurrently: their order is the order their positions were given.
    expect(tree.columns.map((c) => c.id)).toEqual([...columns].sort((a, b) => a.position - b.position).map((c) => c.id));
    const createdIn = new Map(columns.map((column, i) => [column.id, created[i]]));
    tree.columns.forEach((column) => {
      expect(column.cards.map((card) => card.id)).toEqual(createdIn.get(column.id));
      expect(column.cards.map((card) => card.position)).toEqual(Array.from({ length: perColumn }, (_, n) => n + 1));
      for (const card of column.cards) expect(card.description).toBe(description);
    });
  });
});

/**
 * A column whose cards are more than Lambda may answer (6 MB) even compressed: every card stays
 * readable. The tree's 422 names the column, the column's 422 names its cards in order, and each
 * card is read alone. 170 cards of 16,384 random CJK characters (3 bytes each in UTF-8, barely
 * compressible) are 8.4 MB of JSON.
 */
describe('a column too large for one answer', () => {
  const randomCjk = (length: number) =>
    String.fromCodePoint(...Array.from({ length }, () => 0x4e00 + Math.floor(Math.random() * 0x5200)));

  it('is read through the 422s down to its cards, each one whole', async () => {
    const owner = await newUser();
    const board = await newBoard(owner, 'Heavy');
    const column = await newColumn(owner, board.id, 'Archive');
    const descriptions = new Map<string, string>();
    const ids: string[] = [];
    for (let n = 0; n < 170; n++) {
      const description = randomCjk(16_384);
      const reply = await call('POST', `/columns/${column.id}/cards`, {
        token: owner.token,
        body: { title: `Card ${n}`, description },
      });
      expect(reply.status).toBe(201);
      ids.push(reply.body.id);
      descriptions.set(reply.body.id, description);
    }
    const gzip = { 'accept-encoding': 'gzip' };

    const tree = await call('GET', `/boards/${board.id}`, { token: owner.token, headers: gzip });
    expect(tree.status).toBe(422);
    expect(tree.headers.get('content-type')).toBe('application/problem+json');
    expect(tree.body).toMatchObject({ code: 'response_too_large', columns: [{ id: column.id, title: 'Archive', cards: 170 }] });

    const whole = await call('GET', `/columns/${column.id}`, { token: owner.token, headers: gzip });
    expect(whole.status).toBe(422);
    expect(whole.headers.get('content-type')).toBe('application/problem+json');
    expect(whole.body).toMatchObject({ status: 422, code: 'response_too_large', card_ids: ids });
    expect(whole.body.detail).toMatch(/even compressed.*GET \/cards\/\{id\}/);
    const plain = await call('GET', `/columns/${column.id}`, { token: owner.token, headers: { 'accept-encoding': 'identity' } });
    expect({ status: plain.status, card_ids: plain.body.card_ids }).toEqual({ status: 422, card_ids: ids });
    expect(plain.body.detail).toMatch(/send Accept-Encoding/);

    for (let i = 0; i < ids.length; i += 10) {
      const cards = await Promise.all(ids.slice(i, i + 10).map((id) => call('GET', `/cards/${id}`, { token: owner.token })));
      for (const card of cards) {
        expect(card.status).toBe(200);
        expect(card.body.description).toBe(descriptions.get(card.body.id));
      }
    }
  });
});
