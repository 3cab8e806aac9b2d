import { clearDueDate } from '../../lib/data/cards';
import { route } from '../../lib/http/route';
import { cardsDueClear } from '../../lib/rows/cards';

export const handler = route(cardsDueClear, async ({ scope, conditions }) => {
  const { card, etag } = await clearDueDate(scope, conditions.ifMatch);
  return { status: 200, body: card, headers: { etag } };
});
