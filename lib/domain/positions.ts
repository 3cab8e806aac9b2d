/** Position rules of the spec (part 4): pure arithmetic, no storage. */

export const FIRST_POSITION = 1.0;
const POSITION_STEP = 1.0;

/** Position of an item appended after the current highest one (cards in a column, columns in a board). */
export function appendPosition(highest: number | undefined): number {
  return highest === undefined ? FIRST_POSITION : highest + POSITION_STEP;
}

/**
 * The spec's neighbour table: `before` is the item that is to precede the moved one, `after` the
 * one that is to follow it.
 */
export function positionBetween(before: number | undefined, after: number | undefined): number {
  if (before !== undefined && after !== undefined) return (before + after) / 2;
  if (before !== undefined) return before + POSITION_STEP;
  if (after !== undefined) return after - POSITION_STEP;
  return FIRST_POSITION;
}
