import { uuid7, uuid7From, uuid7Time } from '../../lib/domain/uuid7';

/**
 * Comment ids are UUIDv7 (lib/domain/uuid7.ts): a card's comments are one sort-key range in the
 * order written, and a page's `after` is the sort key to go on from. So ids must have the UUID
 * shape the schemas accept, carry version 7 and the RFC variant, and sort as strings in the order
 * they were made, within one millisecond and when the clock goes back too.
 */
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

it('has the UUID shape, version 7, the RFC variant and the time it was made at', () => {
  const before = Date.now();
  const id = uuid7();
  const after = Date.now();
  expect(id).toMatch(V7);
  expect(uuid7Time(id)).toBeGreaterThanOrEqual(before);
  expect(uuid7Time(id)).toBeLessThanOrEqual(after + 1);
});

it('lays the fields out as RFC 9562 does', () => {
  expect(uuid7From(0x017f22e279b0, 0n)).toBe('017f22e2-79b0-7000-8000-000000000000');
  expect(uuid7From(0x017f22e279b0, (1n << 74n) - 1n)).toBe('017f22e2-79b0-7fff-bfff-ffffffffffff');
  expect(uuid7From(0xffffffffffff, 0x123n << 62n)).toBe('ffffffff-ffff-7123-8000-000000000000');
});

it('ids made one after another in a process are strictly increasing as strings, bursts included', () => {
  const ids = Array.from({ length: 5000 }, () => uuid7());
  for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
});

it('the same millisecond, or a clock that went back, still makes a higher id', () => {
  const first = uuid7(Date.now() + 60_000);
  const same = uuid7(Date.now() + 60_000);
  const earlier = uuid7(Date.now() - 60_000);
  expect(same > first).toBe(true);
  expect(earlier > same).toBe(true);
  // The time field never goes back with the clock.
  expect(uuid7Time(earlier)).toBeGreaterThanOrEqual(uuid7Time(first));
});
