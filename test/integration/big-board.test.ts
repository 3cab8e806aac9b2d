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
