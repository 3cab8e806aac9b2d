/**
 * UUIDv7 (RFC 9562, section 5.7): 48 bits of Unix time in milliseconds, then 74 random bits
 * around the version and variant. Ids made later sort after ids made earlier, as strings too (the
 * hex digits are fixed-width and lower case), so the items keyed by them form one sort-key range
 * in the order written. Within one process the ids are strictly increasing (RFC 9562 6.2, method 2):
 * in the same millisecond, or after the clock went back, the 74 bits of the last id are increased
 * by a random step instead of drawn afresh, and a carry past them moves the time field on by one.
 *
 * Written here rather than taken from the `uuid` package: its v7 needs version 10 or later, while
 * 8.3.2 is what the dependency tree already hoists (a top-level 11 would move it under each of its
 * dependents), and its newer majors ship ESM only, which jest's CommonJS transform leaves
 * untransformed under node_modules. The web crypto global needs no import, so lib/domain stays pure.
 */

/** The 74 bits beside the time and the version and variant: 12 (rand_a) + 62 (rand_b). */
const RANDOM_BITS = 74n;
const RANDOM_LIMIT = 1n << RANDOM_BITS;
/** The largest step between two ids of one millisecond: leaves room for about 2^42 of them. */
const STEP_BITS = 32n;

let lastMs = -1;
let lastRandom = 0n;

function randomBigInt(bits: bigint): bigint {
  const bytes = crypto.getRandomValues(new Uint8Array(Number((bits + 7n) / 8n)));
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value & ((1n << bits) - 1n);
}

/** The id's fields as numbers, for `uuid7` and its tests: time in ms and the 74 other bits. */
export function uuid7From(ms: number, random: bigint): string {
  const randA = (random >> 62n) & 0xfffn;
  const randB = random & ((1n << 62n) - 1n);
  const hex = (value: bigint, digits: number) => value.toString(16).padStart(digits, '0');
  const time = hex(BigInt(ms), 12);
  const variantAndB = (2n << 62n) | randB;
  const tail = hex(variantAndB, 16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${hex(randA, 3)}-${tail.slice(0, 4)}-${tail.slice(4)}`;
}

/** A new UUIDv7, higher than every one this process made before. */
export function uuid7(nowMs: number = Date.now()): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    // The top bit clear: a burst in this millisecond has 2^73 of room before it carries.
    lastRandom = randomBigInt(RANDOM_BITS - 1n);
  } else {
    lastRandom += 1n + randomBigInt(STEP_BITS);
    if (lastRandom >= RANDOM_LIMIT) {
      lastMs += 1;
      lastRandom = randomBigInt(RANDOM_BITS - 1n);
    }
  }
  return uuid7From(lastMs, lastRandom);
}

/** The time (Unix ms) a UUIDv7 was made at. */
export const uuid7Time = (id: string): number => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
