import { randomUUID } from 'node:crypto';
import { cardIdPrefixOf, cardIdUnder, newCardId, newCardIdPrefix } from '../../lib/domain/card-ids';
import { uuid7 } from '../../lib/domain/uuid7';

/** RFC 9562: a UUID of version 8 with the variant 10, in lower case. */
const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('card ids under a board prefix', () => {
  it('are version 8 UUIDs that start with their prefix and give it back', () => {
    const prefix = newCardIdPrefix();
    for (let i = 0; i < 200; i++) {
      const id = cardIdUnder(prefix);
      expect(id).toMatch(UUID_V8);
      expect(id.startsWith(`${prefix}-`)).toBe(true);
      expect(cardIdPrefixOf(id)).toBe(prefix);
    }
  });

  it('draw their prefixes and their own parts at random', () => {
    const prefixes = new Set(Array.from({ length: 1000 }, newCardIdPrefix));
    expect(prefixes.size).toBe(1000);
    const prefix = newCardIdPrefix();
    const ids = Array.from({ length: 1000 }, () => cardIdUnder(prefix));
    expect(new Set(ids).size).toBe(1000);
    // Each of the 4 variant digits comes up: its 2 low bits are random too.
    expect(new Set(ids.map((id) => id[19])).size).toBe(4);
  });

  it('a board without a prefix gets version 4 ids; other versions carry no prefix', () => {
    const id = newCardId(undefined);
    expect(id[14]).toBe('4');
    expect(cardIdPrefixOf(id)).toBeUndefined();
    expect(cardIdPrefixOf(randomUUID())).toBeUndefined();
    expect(cardIdPrefixOf(uuid7())).toBeUndefined();
    expect(cardIdPrefixOf(newCardId(newCardIdPrefix()))).toBeDefined();
  });
});
