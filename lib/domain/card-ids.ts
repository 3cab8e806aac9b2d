/**
 * Card ids that name their board. Card routes are addressed by the card's id alone, while the
 * table is keyed by board, so each card id must lead to its board in one read. A card id made
 * here is a UUIDv8 (RFC 9562, section 5.8) whose first 60 bits are its board's card-id prefix,
 * the same for every card of the board, and whose other 62 bits are random:
 *
 *   pppppppp-pppp-8ppp-Vrrr-rrrrrrrrrrrr   p: the board's prefix, 8: the version, V: the variant
 *                                           (8 to b) with 2 random bits, r: random
 *
 * One item per board maps the prefix to the board, instead of one item per card: a create writes
 * one item fewer, and a batch of 25 creates 25 fewer. Cards of boards made before the prefix
 * existed keep random (version 4) ids, each with its own lookup item; the version digit tells the
 * two apart.
 */

/** The version digit of an id made here, at the first character of its third group. */
const VERSION = '8';
const VERSION_AT = 14;
/** `pppppppp-pppp-8ppp`: the board's prefix as it stands at the start of each of its card ids. */
const PREFIX_LENGTH = 18;

const randomHex = (digits: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(Math.ceil(digits / 2))), (byte) => byte.toString(16).padStart(2, '0'))
    .join('')
    .slice(0, digits);

/** A new board's card-id prefix: 60 random bits around the version digit. */
export function newCardIdPrefix(): string {
  const hex = randomHex(15);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${VERSION}${hex.slice(12)}`;
}

/** A new card id under a board's prefix. */
export function cardIdUnder(prefix: string): string {
  const hex = randomHex(16);
  // The variant's two top bits are 10: the first digit is 8, 9, a or b.
  const variant = ((Number.parseInt(hex[0]!, 16) & 0x3) | 0x8).toString(16);
  return `${prefix}-${variant}${hex.slice(1, 4)}-${hex.slice(4)}`;
}

/** A new card id for a board: under its prefix, or a version 4 id on a board made before prefixes. */
export const newCardId = (prefix: string | undefined): string => (prefix ? cardIdUnder(prefix) : crypto.randomUUID());

/** The board prefix a card id carries; none for a version 4 id (a card with its own lookup). */
export function cardIdPrefixOf(cardId: string): string | undefined {
  return cardId[VERSION_AT] === VERSION ? cardId.slice(0, PREFIX_LENGTH) : undefined;
}

/**
 * Where card ids fall in their sort order, as numbers: what a big board's tree is split by (its
 * cards are read as parallel ranges of ids, lib/data/boards.ts). Positions follow the ids' string
 * order. An id under a prefix is placed by its first 14 random bits (the variant's 2 and the next
 * 3 hex digits), a version 4 id by its first 16 bits.
 */
export interface CardIdSpace {
  size: number;
  positionOf(cardId: string): number;
  /** The first characters of every id at `position`: a range's bound. */
  idStartAt(position: number): string;
}

const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');

/** The space of the ids under `prefix`, or of version 4 ids (no prefix). */
export function cardIdSpace(prefix: string | undefined): CardIdSpace {
  if (prefix === undefined) {
    return {
      size: 0x10000,
      positionOf: (cardId) => Number.parseInt(cardId.slice(0, 4), 16),
      idStartAt: (position) => hex(position, 4),
    };
  }
  const at = PREFIX_LENGTH + 1;
  return {
    size: 0x4000,
    positionOf: (cardId) => ((Number.parseInt(cardId[at]!, 16) - 8) << 12) | Number.parseInt(cardId.slice(at + 1, at + 4), 16),
    idStartAt: (position) => `${prefix}-${(8 + (position >> 12)).toString(16)}${hex(position & 0xfff, 3)}`,
  };
}
