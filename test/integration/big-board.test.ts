import { call, newBoard, newColumn, newUser, readTree, type TestUser } from '../support/api';
import { type SeedColumn, seedViaBatch } from '../support/seed-via-batch';

/**
 * What these tests read is a big board; how it was built is not their subject (cards.test.ts,
 * batch.test.ts and concurrency.test.ts create cards). So all cards but the last of each column are
 * created through POST /boards/{id}/batch as a client would (test/support/seed-via-batch.ts: up
 * to 25 creates and 64 KiB a request), and the last by POST /columns/{id}/cards, whose position
 * shows that the single route appends after the batches' cards.
 *
 * That takes time: on a shared 2-core machine this file takes 34 to 58 s, where writing the same
 * cards straight into the table took 24 to 40 s; most of the difference is the second test's 169
 * batches (each description alone is 49 KB in UTF-8, so each batch holds one card).
 *
 * Each test writes 1 MB or 8 MB into DynamoDB Local and reads it back, which a busy machine slows
 * down far more than it slows the service. So each test has a budget of 5 minutes, a hang guard and
 * no speed target.
 */
jest.setTimeout(300_000);

/** Seeds `columns` of the board through the batch route as `owner`: each column's cards with their ids, in position order. */
const seed = (owner: TestUser, boardId: string, columns: SeedColumn[]) =>
  seedViaBatch((body) => call('POST', `/boards/${boardId}/batch`, { token: owner.token, body }), columns);

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
    const seeded = await seed(
      owner,
      board.id,
      columns.map((column) => ({
        id: column.id,
        cards: Array.from({ length: perColumn - 1 }, (_, n) => ({ title: `Card ${n}`, description })),
      })),
    );
    const created = await Promise.all(
      columns.map(async (column, i) => {
        const reply = await call('POST', `/columns/${column.id}/cards`, {
          token: owner.token,
          body: { title: `Card ${perColumn - 1}`, description },
        });
        expect({ status: reply.status, position: reply.body.position }).toEqual({ status: 201, position: perColumn });
        return [...seeded[i]!.map((card) => card.id), reply.body.id as string];
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
    const seededCards = Array.from({ length: 169 }, (_, n) => ({ title: `Card ${n}`, description: randomCjk(16_384) }));
    // Each create is a batch of its own: two such descriptions (49 KB each in UTF-8) are more than a request may hold.
    const [seeded] = await seed(owner, board.id, [{ id: column.id, cards: seededCards }]);
    const descriptions = new Map(seeded!.map((card) => [card.id, card.description]));
    const last = randomCjk(16_384);
    const reply = await call('POST', `/columns/${column.id}/cards`, {
      token: owner.token,
      body: { title: 'Card 169', description: last },
    });
    expect({ status: reply.status, position: reply.body.position }).toEqual({ status: 201, position: 170 });
    descriptions.set(reply.body.id, last);
    const ids = [...seeded!.map((card) => card.id), reply.body.id as string];
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
