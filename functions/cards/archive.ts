import { archiveCard } from '../../lib/data/archive';
import { route } from '../../lib/http/route';
import { cardsArchive } from '../../lib/rows/cards';

export const handler = route(cardsArchive, async ({ scope, conditions }) => {
  const { card, etag } = await archiveCard(scope, conditions.ifMatch);
  return { status: 200, body: card, headers: { etag } };
});
