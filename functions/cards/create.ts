import { createCard, highestCardPosition } from '../../lib/data/cards';
import { route } from '../../lib/http/route';

/** The column's highest card position is queried alongside the membership check (one round trip less). */
export const handler = route<'cards.create', number | undefined>(
  'cards.create',
  async ({ scope, body, preloaded }) => ({ status: 201, body: await createCard(scope, body, preloaded) }),
  { preload: ({ boardId, columnId }) => highestCardPosition(boardId, columnId!) },
);
