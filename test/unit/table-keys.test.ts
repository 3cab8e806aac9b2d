import fc from 'fast-check';
import { columnPositionKey, columnPositionPrefix, decodePosition, encodePosition, keys } from '../../lib/data/table';

/** Doubles of every kind: both signs, zeros, subnormals, the extremes, and ordinary positions. */
const special = fc.constantFrom(
  0,
  -0,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  2.2250738585072014e-308, // smallest normal
  -2.2250738585072014e-308,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.EPSILON,
  1,
  -1,
  1 + Number.EPSILON,
  1 - Number.EPSILON / 2,
  0.5,
  1.5,
  2 ** 53,
  -(2 ** 53),
);
const anyFinite = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), special, fc.integer().map(Number));
const tiny = fc.double({ min: -1e-300, max: 1e-300, noNaN: true });
const huge = fc.oneof(
  fc.double({ min: 1e300, max: Number.MAX_VALUE, noNaN: true }),
  fc.double({ min: -Number.MAX_VALUE, max: -1e300, noNaN: true }),
);
const position = fc.oneof(anyFinite, tiny, huge);

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const compareNumber = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

describe('encodePosition / decodePosition', () => {
  it('round-trips every finite double (-0 comes back as 0, the same position)', () => {
    fc.assert(
      fc.property(position, (x) => {
        const back = decodePosition(encodePosition(x));
        expect(back === x).toBe(true);
        if (x !== 0) expect(Object.is(back, x)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('-0 and 0 encode identically (they are equal positions)', () => {
    expect(encodePosition(-0)).toBe(encodePosition(0));
    expect(decodePosition(encodePosition(-0))).toBe(0);
  });

  it('encodings are 16 lower-case hex digits', () => {
    fc.assert(
      fc.property(position, (x) => {
        expect(encodePosition(x)).toMatch(/^[0-9a-f]{16}$/);
      }),
    );
  });

  it('string order of two encodings equals the numeric order of the positions', () => {
    fc.assert(
      fc.property(position, position, (a, b) => {
        expect(compareText(encodePosition(a), encodePosition(b))).toBe(compareNumber(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it('sorting encodings sorts the positions', () => {
    fc.assert(
      fc.property(fc.array(position, { maxLength: 60 }), (list) => {
        const byText = list
          .map((x) => encodePosition(x))
          .sort(compareText)
          .map(decodePosition);
        const byNumber = [...list].sort(compareNumber);
        expect(byText).toEqual(byNumber.map((x) => (x === 0 ? 0 : x)));
      }),
    );
  });

  it('neighbouring doubles keep their order (no two distinct positions share an encoding)', () => {
    const view = new DataView(new ArrayBuffer(8));
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -Number.MAX_VALUE, max: 1e308 }), (x) => {
        // next double above x
        const y =
          x === 0
            ? Number.MIN_VALUE
            : (() => {
                view.setFloat64(0, x);
                const bits = view.getBigUint64(0);
                view.setBigUint64(0, x > 0 ? bits + 1n : bits - 1n);
                return view.getFloat64(0);
              })();
        expect(y).toBeGreaterThan(x);
        expect(encodePosition(x) < encodePosition(y)).toBe(true);
      }),
    );
  });

  it('known values', () => {
    expect(encodePosition(0)).toBe('8000000000000000');
    expect(encodePosition(1)).toBe('bff0000000000000');
    expect(encodePosition(-1)).toBe('400fffffffffffff');
    expect(encodePosition(2) > encodePosition(1.5)).toBe(true);
    expect(encodePosition(-2) < encodePosition(-1.5)).toBe(true);
  });

  it('rejects what is not a finite number, and what is not an encoding', () => {
    expect(() => encodePosition(Number.NaN)).toThrow(RangeError);
    expect(() => encodePosition(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => encodePosition(Number.NEGATIVE_INFINITY)).toThrow(RangeError);
    expect(() => decodePosition('')).toThrow(RangeError);
    expect(() => decodePosition('8000')).toThrow(RangeError);
    expect(() => decodePosition('800000000000000000')).toThrow(RangeError);
  });
});

describe('column position keys (LSI sort key)', () => {
  it('inside one column, key order is position order', () => {
    fc.assert(
      fc.property(fc.uuid(), position, position, (columnId, a, b) => {
        const ka = columnPositionKey(columnId, a);
        const kb = columnPositionKey(columnId, b);
        expect(ka.startsWith(columnPositionPrefix(columnId))).toBe(true);
        expect(compareText(ka, kb)).toBe(compareNumber(a, b));
      }),
    );
  });

  it("one column's prefix never matches another column's keys", () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), position, (a, b, x) => {
        fc.pre(a !== b);
        expect(columnPositionKey(b, x).startsWith(columnPositionPrefix(a))).toBe(false);
      }),
    );
  });
});

describe('item keys', () => {
  it('a board tree query (CARD# .. COLUMN#\\uffff) takes the columns and cards and nothing else of the board', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), (boardId, otherId) => {
        const from = keys.cardPrefix;
        const to = `${keys.columnPrefix}\uffff`;
        const inRange = (sk: string) => sk >= from && sk <= to;
        expect(inRange(keys.card(boardId, otherId).sk)).toBe(true);
        expect(inRange(keys.column(boardId, otherId).sk)).toBe(true);
        expect(inRange(keys.board(boardId).sk)).toBe(false);
        expect(inRange(keys.member(boardId, otherId).sk)).toBe(false);
      }),
    );
  });

  it('a board and everything on it share one partition; lookups do not', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), (boardId, id) => {
        const partition = keys.boardPartition(boardId);
        for (const key of [keys.board(boardId), keys.member(boardId, id), keys.column(boardId, id), keys.card(boardId, id)]) {
          expect(key.pk).toBe(partition);
        }
        expect(keys.cardLookup(id).pk).not.toBe(keys.columnLookup(id).pk);
        expect(keys.cardLookup(id).pk).not.toBe(partition);
      }),
    );
  });

  it('emails are keyed case-insensitively', () => {
    expect(keys.email('Someone@Example.TEST')).toEqual(keys.email('someone@example.test'));
  });
});
