import { deleteCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsDelete } from '../../lib/rows/cards';

export const handler = route(cardsDelete, async ({ scope }) => {
  await deleteCard(scope);
  return { status: 204 };
});
