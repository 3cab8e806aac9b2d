import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { treeRangesAfter } from '../../lib/data/boards';

/** Sort keys as the table writes them for a board's cards and columns. */
const cardSk = fc.uuid({ version: 4 }).map((id) => `CARD#${id}`);
const columnSk = fc.uuid({ version: 4 }).map((id) => `COLUMN#${id}`);
const anySk = fc.oneof(cardSk, columnSk);

describe('the ranges a big board tree is read in, after its first page', () => {
  it('put every later card or column in exactly one range, and no earlier one in any', () => {
    fc.assert(
      fc.property(anySk, fc.array(anySk, { maxLength: 50 }), (lastSk, others) => {
        const ranges = treeRangesAfter(lastSk);
        for (const sk of others) {
          const holding = ranges.filter((r) => sk >= r.from && sk <= r.to && (!r.resume || sk > lastSk));
          expect(holding).toHaveLength(sk > lastSk ? 1 : 0);
        }
      }),
    );
  });

  it('resume only the range the first page stopped in', () => {
    const id = `7${randomUUID().slice(1)}`;
    const ranges = treeRangesAfter(`CARD#${id}`);
    expect(ranges.map((r) => [r.from, r.resume])).toEqual([
      ['CARD#7', true],
      ...[...'89abcdef'].map((d) => [`CARD#${d}`, false]),
      ['COLUMN#', false],
    ]);
    expect(treeRangesAfter(`COLUMN#${randomUUID()}`).map((r) => [r.from, r.resume])).toEqual([['COLUMN#', true]]);
  });
});
