import { createCard, highestCardPosition } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsCreate } from '../../lib/rows/cards';

/** The column's highest card position is queried alongside the membership check (one round trip less). */
export const handler = route<typeof cardsCreate, number | undefined>(
  cardsCreate,
  async ({ scope, body, preloaded }) => ({ status: 201, body: await createCard(scope, body, preloaded) }),
  { preload: ({ boardId, columnId }) => highestCardPosition(boardId, columnId!) },
);
