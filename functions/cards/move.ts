import { moveCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsMove } from '../../lib/rows/cards';

/** Target column and neighbours are fetched with the card, so a move costs three round trips. */
export const handler = route(cardsMove, async ({ scope, body }) => ({ status: 200, body: await moveCard(scope, body) }), {
  related: (body) => ({ columns: [body.target_column_id], cards: [body.before_id, body.after_id] }),
});
