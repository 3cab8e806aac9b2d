import { restoreCard } from '../../lib/data/archive';
import { route } from '../../lib/http/route';
import { cardsRestore } from '../../lib/rows/cards';

/** The end of the column is read after the access check: three round trips, then the write. */
export const handler = route(cardsRestore, async ({ scope, conditions }) => {
  const { card, etag } = await restoreCard(scope, conditions.ifMatch);
  return { status: 200, body: card, headers: { etag } };
});
