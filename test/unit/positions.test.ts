import fc from 'fast-check';
import { byNewestFirst, byPosition } from '../../lib/domain/ordering';
import { appendPosition, FIRST_POSITION, positionBetween } from '../../lib/domain/positions';

// --- helpers: walk the doubles in numeric order by their bit patterns -------------------------

const view = new DataView(new ArrayBuffer(8));
const SIGN = 0x8000_0000_0000_0000n;

/** Rank of a finite double in numeric order (adjacent doubles differ by 1; -0 and 0 share rank 0). */
function rankOf(x: number): bigint {
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  return bits & SIGN ? -(bits & ~SIGN) : bits;
}

function fromRank(rank: bigint): number {
  view.setBigUint64(0, rank < 0n ? -rank | SIGN : rank);
  return view.getFloat64(0);
}

/** The double `steps` representable values above `x`. */
const stepUp = (x: number, steps: number) => fromRank(rankOf(x) + BigInt(steps));

// Far enough from the overflow edge that (a + b) stays finite.
const LIMIT = 1e300;
const finite = fc.double({ min: -LIMIT, max: LIMIT, noNaN: true });
const exactRange = fc.double({ min: -(2 ** 52), max: 2 ** 52, noNaN: true });

describe('positionBetween: the spec table (part 4, rule 5)', () => {
  it('neither neighbour gives 1.0', () => {
    expect(positionBetween(undefined, undefined)).toBe(1.0);
    expect(FIRST_POSITION).toBe(1.0);
  });

  it('the examples of the table', () => {
    expect(positionBetween(1, 2)).toBe(1.5);
    expect(positionBetween(2, 1)).toBe(1.5);
    expect(positionBetween(-3, 5)).toBe(1);
    expect(positionBetween(4, undefined)).toBe(5);
    expect(positionBetween(undefined, 4)).toBe(3);
    expect(positionBetween(0.5, undefined)).toBe(1.5);
    expect(positionBetween(undefined, 0.5)).toBe(-0.5);
  });

  it('both neighbours: the midpoint, never outside the two', () => {
    fc.assert(
      fc.property(finite, finite, (x, y) => {
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        const mid = positionBetween(x, y);
        expect(mid).toBe((x + y) / 2);
        expect(mid).toBeGreaterThanOrEqual(lo);
        expect(mid).toBeLessThanOrEqual(hi);
      }),
    );
  });

  it('before only: lands strictly after the before card (while 1.0 is above its precision)', () => {
    fc.assert(
      fc.property(exactRange, (before) => {
        const position = positionBetween(before, undefined);
        expect(position).toBe(before + 1);
        expect(position).toBeGreaterThan(before);
      }),
    );
  });

  it('after only: lands strictly before the after card (while 1.0 is above its precision)', () => {
    fc.assert(
      fc.property(exactRange, (after) => {
        const position = positionBetween(undefined, after);
        expect(position).toBe(after - 1);
        expect(position).toBeLessThan(after);
      }),
    );
  });

  it('a midpoint of two distinct numbers with a double between them is strictly between them', () => {
    fc.assert(
      fc.property(finite, fc.integer({ min: 2, max: 1_000_000 }), (a, steps) => {
        const b = stepUp(a, steps);
        expect(b).toBeGreaterThan(a);
        const mid = positionBetween(a, b);
        expect(mid).toBeGreaterThan(a);
        expect(mid).toBeLessThan(b);
      }),
      { numRuns: 2000 },
    );
  });

  it('precision runs out only for adjacent doubles: their midpoint is one of the two', () => {
    fc.assert(
      fc.property(finite, (a) => {
        const b = stepUp(a, 1);
        const mid = positionBetween(a, b);
        expect(mid === a || mid === b).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('MEASURED: from neighbours 1.0 and 2.0, the 53rd move to the lower midpoint equals a neighbour (52 distinct midpoints)', () => {
    const lower = 1.0;
    let previous = 2.0;
    let moves = 0;
    for (;;) {
      const next = positionBetween(lower, previous);
      moves++;
      if (next === lower || next === previous) {
        // Ties-to-even: 1 + 2^-53 rounds down onto the lower neighbour itself.
        expect(next).toBe(lower);
        break;
      }
      expect(next).toBeGreaterThan(lower);
      expect(next).toBeLessThan(previous);
      expect(next).toBe(1 + 2 ** -moves);
      previous = next;
      if (moves > 10_000) throw new Error('midpoints never collapsed');
    }
    expect(moves).toBe(53);
    expect(previous).toBe(1 + 2 ** -52);
  });
});

describe('appendPosition', () => {
  it('is 1.0 for an empty column and highest + 1.0 afterwards', () => {
    expect(appendPosition(undefined)).toBe(1.0);
    expect(appendPosition(1)).toBe(2);
    expect(appendPosition(-7.5)).toBe(-6.5);
    expect(appendPosition(0.25)).toBe(1.25);
  });

  it('n appends to an empty column give exactly 1..n', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), (n) => {
        const positions: number[] = [];
        let highest: number | undefined;
        for (let i = 0; i < n; i++) {
          highest = appendPosition(highest);
          positions.push(highest);
        }
        expect(positions).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      }),
      { numRuns: 50 },
    );
  });

  it('always lands strictly above the highest position (while 1.0 is above its precision)', () => {
    fc.assert(
      fc.property(exactRange, (highest) => {
        expect(appendPosition(highest)).toBeGreaterThan(highest);
      }),
    );
  });
});

// --- ordering.ts --------------------------------------------------------------------------------

interface Item {
  id: string;
  position: number;
  created_at: string;
}

const isoTimestamp = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }).map((ms) => new Date(ms).toISOString());

/** Small pools of values so that ties on position and on created_at are frequent. */
const items = fc.uniqueArray(
  fc.record({
    id: fc.uuid(),
    position: fc.constantFrom(-1, 0, 0.5, 1, 1.5, 2, 1e9),
    created_at: fc.constantFrom('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z', '2026-06-30T12:00:00.000Z'),
  }),
  { selector: (item) => item.id, maxLength: 30 },
);

describe('byPosition (tree order of columns and cards)', () => {
  it('orders by position ascending', () => {
    const a = { id: 'b', position: 1, created_at: '2026-01-02T00:00:00.000Z' };
    const b = { id: 'a', position: 2, created_at: '2026-01-01T00:00:00.000Z' };
    expect([b, a].sort(byPosition)).toEqual([a, b]);
  });

  it('breaks a tie on position by created_at (older first)', () => {
    const older = { id: 'z', position: 1, created_at: '2026-01-01T00:00:00.000Z' };
    const newer = { id: 'a', position: 1, created_at: '2026-01-01T00:00:00.001Z' };
    expect([newer, older].sort(byPosition)).toEqual([older, newer]);
  });

  it('breaks a tie on position and created_at by id', () => {
    const a = { id: '0a9c1e4e-0000-4000-8000-000000000000', position: 1, created_at: '2026-01-01T00:00:00.000Z' };
    const b = { id: 'f1b2c3d4-0000-4000-8000-000000000000', position: 1, created_at: '2026-01-01T00:00:00.000Z' };
    expect([b, a].sort(byPosition)).toEqual([a, b]);
  });

  it('gives the same order whatever the input order (no flicker between reads)', () => {
    fc.assert(
      fc.property(
        items.chain((list) => fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length }))),
        ([list, shuffled]) => {
          expect([...shuffled].sort(byPosition)).toEqual([...list].sort(byPosition));
        },
      ),
    );
  });

  it('sorted output is ascending by (position, created_at, id)', () => {
    fc.assert(
      fc.property(items, (list) => {
        const sorted = [...list].sort(byPosition);
        for (let i = 1; i < sorted.length; i++) {
          const [p, q] = [sorted[i - 1]!, sorted[i]!];
          const key = (x: Item) => [x.position, x.created_at, x.id] as const;
          const [pp, pc, pi] = key(p);
          const [qp, qc, qi] = key(q);
          expect(pp < qp || (pp === qp && (pc < qc || (pc === qc && pi < qi)))).toBe(true);
        }
      }),
    );
  });
});

describe('byNewestFirst (GET /boards order)', () => {
  it('orders by created_at, newest first, then by id', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ id: fc.uuid(), created_at: isoTimestamp }), { selector: (b) => b.id, maxLength: 30 }),
        (boards) => {
          const sorted = [...boards].sort(byNewestFirst);
          for (let i = 1; i < sorted.length; i++) {
            const [p, q] = [sorted[i - 1]!, sorted[i]!];
            expect(p.created_at > q.created_at || (p.created_at === q.created_at && p.id < q.id)).toBe(true);
          }
        },
      ),
    );
  });

  it('breaks an equal created_at by id', () => {
    const a = { id: 'a', created_at: '2026-01-01T00:00:00.000Z' };
    const b = { id: 'b', created_at: '2026-01-01T00:00:00.000Z' };
    const c = { id: 'c', created_at: '2026-01-02T00:00:00.000Z' };
    expect([b, a, c].sort(byNewestFirst)).toEqual([c, a, b]);
  });
});
