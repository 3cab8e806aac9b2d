import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { treeRangesAfter } from '../../lib/data/boards';
import { cardIdUnder, newCardIdPrefix } from '../../lib/domain/card-ids';

/** Sort keys as the table writes them for a board's cards (of a board made before card-id prefixes) and columns. */
const cardSk = fc.uuid({ version: 4 }).map((id) => `CARD#${id}`);
const columnSk = fc.uuid({ version: 4 }).map((id) => `COLUMN#${id}`);
const anySk = fc.oneof(cardSk, columnSk);

/** The same for a board with a card-id prefix: every card id under it. */
const prefix = newCardIdPrefix();
const prefixedCardSk = fc
  .tuple(fc.constantFrom(...'89ab'), fc.stringMatching(/^[0-9a-f]{3}-[0-9a-f]{12}$/))
  .map(([variant, rest]) => `CARD#${prefix}-${variant}${rest}`);
const anyPrefixedSk = fc.oneof(prefixedCardSk, columnSk);

describe('the ranges a big board tree is read in, after its first page', () => {
  /** Whatever the first page's last key: every later key of the board in exactly one range, no earlier one in any. */
  const everyLaterKeyOnce = (keys: fc.Arbitrary<string>) =>
    fc.assert(
      fc.property(keys, fc.array(keys, { maxLength: 50 }), (lastSk, others) => {
        const ranges = treeRangesAfter(lastSk);
        for (const sk of others) {
          const holding = ranges.filter((r) => sk >= r.from && sk <= r.to && (!r.resume || sk > lastSk));
          expect(holding).toHaveLength(sk > lastSk ? 1 : 0);
        }
      }),
    );

  it('put every later card or column in exactly one range, and no earlier one in any', () => everyLaterKeyOnce(anySk));

  it('on a board with a card-id prefix too: every later card or column in exactly one range, none before', () =>
    everyLaterKeyOnce(anyPrefixedSk));

  it("split a prefixed board's cards by the random digits after the prefix, as many ranges as a version 4 board's", () => {
    const cardRanges = (lastSk: string) => treeRangesAfter(lastSk).length;
    // The first page covered 1/8 of the ids (position 0x7ff of 0x4000): 9 ranges, as above.
    expect(cardRanges(`CARD#${prefix}-87ff-000000000000`)).toBe(9);
    expect(cardRanges(`CARD#${prefix}-8fff-000000000000`)).toBe(4);
    expect(cardRanges(`CARD#${prefix}-b800-000000000000`)).toBe(1);
    // Every range but the last stays within the prefix's ids, and they are not one range.
    const ranges = treeRangesAfter(`CARD#${prefix}-8010-${cardIdUnder(prefix).slice(-12)}`);
    expect(ranges).toHaveLength(16);
    for (const range of ranges.slice(0, -1)) expect(range.to.startsWith(`CARD#${prefix}-`)).toBe(true);
  });

  it('resume only the range the first page stopped in, the last one running on through the columns and labels', () => {
    const ranges = treeRangesAfter(`CARD#7${randomUUID().slice(1)}`);
    expect(ranges[0]).toMatchObject({ resume: true });
    expect(ranges[0]!.from.startsWith('CARD#7')).toBe(true);
    expect(ranges.slice(1).every((r) => !r.resume)).toBe(true);
    expect(ranges.at(-1)!.to).toBe('LABEL#\uffff');
    expect(treeRangesAfter(`COLUMN#${randomUUID()}`)).toEqual([{ from: 'COLUMN#', to: 'LABEL#\uffff', resume: true }]);
  });

  it('split the rest of the cards into 15 % more ranges than the first page suggests pages, so each fits one page', () => {
    const cardRanges = (lastSk: string) => treeRangesAfter(lastSk).length;
    // The first page covered 1/8 of the card ids: about 7 more pages' worth, read as ⌈7 × 1.15⌉ = 9 ranges.
    expect(cardRanges('CARD#1fff0000-0000-4000-8000-000000000000')).toBe(9);
    // 1/4: 3 more pages' worth, as 4 ranges.
    expect(cardRanges('CARD#3fff0000-0000-4000-8000-000000000000')).toBe(4);
    // It covered almost all: one range finishes the job.
    expect(cardRanges('CARD#f0000000-0000-4000-8000-000000000000')).toBe(1);
    // A tiny first share is capped at 16 parallel ranges.
    expect(cardRanges('CARD#00100000-0000-4000-8000-000000000000')).toBe(16);
  });
});
