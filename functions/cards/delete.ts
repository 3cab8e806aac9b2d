import { deleteCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';

export const handler = route('cards.delete', async ({ scope }) => {
  await deleteCard(scope);
  return { status: 204 };
});
