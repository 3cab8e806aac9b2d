import { unassignMember } from '../../lib/data/assignees';
import { route } from '../../lib/http/route';
import { cardsAssigneesRemove } from '../../lib/rows/cards';

export const handler = route(cardsAssigneesRemove, async ({ scope, params, conditions }) => {
  const { card, etag } = await unassignMember(scope, params.user_id, conditions.ifMatch);
  return { status: 200, body: card, headers: { etag } };
});
