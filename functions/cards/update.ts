import { updateCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsUpdate } from '../../lib/rows/cards';

export const handler = route(cardsUpdate, async ({ scope, body }) => ({
  status: 200,
  body: await updateCard(scope, body),
}));
