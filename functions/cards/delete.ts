import { deleteCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsDelete } from '../../lib/rows/cards';

export const handler = route(cardsDelete, async ({ scope, conditions }) => {
  await deleteCard(scope, conditions.ifMatch);
  return { status: 204 };
});
