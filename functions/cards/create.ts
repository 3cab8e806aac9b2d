import { createCard, highestCardPosition } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsCreate } from '../../lib/rows/cards';

/** The column's highest card position is queried alongside the membership check (one round trip less). */
export const handler = route<typeof cardsCreate, number | undefined>(
  cardsCreate,
  async ({ scope, body, preloaded }) => {
    const { card, etag } = await createCard(scope, body, preloaded);
    // Every answer that returns a card carries its entity tag, ready for an If-Match.
    return { status: 201, body: card, headers: { etag } };
  },
  { preload: ({ boardId, columnId }) => highestCardPosition(boardId, columnId!) },
);
