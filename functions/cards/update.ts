import { updateCard } from '../../lib/data/cards';
import { route } from '../../lib/http/route';

export const handler = route('cards.update', async ({ scope, body }) => ({
  status: 200,
  body: await updateCard(scope, body),
}));
