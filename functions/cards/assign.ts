import { assignMember } from '../../lib/data/assignees';
import { route } from '../../lib/http/route';
import { cardsAssigneesAdd } from '../../lib/rows/cards';

/** Whether the user is a member is read from the board item, which the access check brings: no extra round trip. */
export const handler = route(cardsAssigneesAdd, async ({ scope, params, conditions }) => {
  const { card, etag } = await assignMember(scope, params.user_id, conditions.ifMatch);
  return { status: 200, body: card, headers: { etag } };
});
