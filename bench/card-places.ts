import { positionBetween } from '../lib/domain/positions';

interface Tree {
  columns: { id: string; cards: { id: string; position: number }[] }[];
}

/**
 * Where each card of a benchmark board is, so that every planned move really moves its card: a
 * move to the place a card already has writes nothing and emits no event (lib/data/cards.ts), and
 * the benchmark measures moves and waits for their events.
 */
export class CardPlaces {
  private readonly places = new Map<string, { column: string; position: number }>();
  private readonly columns: string[];

  constructor(tree: Tree) {
    this.columns = tree.columns.map((column) => column.id);
    for (const column of tree.columns) {
      for (const card of column.cards) this.places.set(card.id, { column: column.id, position: card.position });
    }
  }

  /** A move of `id` to `target` (between `before` and `after` when both are given), to the next column where that would leave it in place. */
  body(id: string, target: string, neighbours?: { before: string; after: string }) {
    const place = this.places.get(id)!;
    const position = neighbours
      ? positionBetween(this.places.get(neighbours.before)!.position, this.places.get(neighbours.after)!.position)
      : positionBetween(undefined, undefined);
    const stays = place.column === target && place.position === position;
    const column = stays ? this.columns[(this.columns.indexOf(target) + 1) % this.columns.length]! : target;
    return neighbours
      ? { target_column_id: column, before_id: neighbours.before, after_id: neighbours.after }
      : { target_column_id: column };
  }

  /** Records a move's answer (the card as moved). */
  moved(card: { id: string; column_id: string; position: number }) {
    this.places.set(card.id, { column: card.column_id, position: card.position });
  }
}
