import { scopeVia } from '../../lib/data/access';
import { deleteCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsDelete } from '../../lib/rows/cards';

export const handler = route(cardsDelete, async ({ scope }) => {
  await deleteCard(scopeVia(scope, 'card'));
  return { status: 204 };
});
