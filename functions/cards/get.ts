import { toCard } from '../../lib/data/records';
import { route } from '../../lib/http/route';
import { cardsGet } from '../../lib/rows/cards';

/** The access check already read the card (and proved its column and board exist). */
export const handler = route(cardsGet, async ({ scope }) => ({
  status: 200,
  body: toCard(scope.card, scope.board.labels),
}));
