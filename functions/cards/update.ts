import { updateCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsUpdate } from '../../lib/rows/cards';

export const handler = route(cardsUpdate, async ({ scope, body, conditions }) => {
  const { card, etag } = await updateCard(scope, body, conditions.ifMatch);
  return { status: 200, body: card, headers: { etag } };
});
