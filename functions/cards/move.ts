import { moveCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsMove } from '../../lib/rows/cards';

/** Target column and neighbours are fetched with the card, so a move costs three round trips. */
export const handler = route(
  cardsMove,
  async ({ scope, body, conditions }) => {
    const { card, etag } = await moveCard(scope, body, conditions.ifMatch);
    return { status: 200, body: card, headers: { etag } };
  },
  {
    related: (body) => ({ columns: [body.target_column_id], cards: [body.before_id, body.after_id] }),
  },
);
