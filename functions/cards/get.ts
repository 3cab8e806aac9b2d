import { shownCard } from '../../lib/data/etags';
import { matchesWeakly } from '../../lib/http/conditional';
import { route } from '../../lib/http/route';
import { cardsGet } from '../../lib/rows/cards';

/**
 * The access check already read the card (and proved its column and board exist), and the board
 * item whose live labels it shows: its entity tag costs no read, and a tag the client already
 * holds is answered 304 without the body.
 */
export const handler = route(cardsGet, async ({ scope, conditions }) => {
  const { card, etag } = shownCard(scope.card, scope.board);
  if (conditions.ifNoneMatch && matchesWeakly(conditions.ifNoneMatch, etag)) return { status: 304, headers: { etag } };
  return { status: 200, body: card, headers: { etag } };
});
