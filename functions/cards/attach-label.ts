import { attachLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';
import { cardsLabelsAttach } from '../../lib/rows/cards';

/** The label is looked up with the card, so an attach costs three round trips (two without a change). */
export const handler = route(
  cardsLabelsAttach,
  async ({ scope, params, conditions }) => {
    const { card, etag } = await attachLabel(scope, params.label_id, conditions.ifMatch);
    return { status: 200, body: card, headers: { etag } };
  },
  { related: (_body, params) => ({ labels: [params.label_id as string] }) },
);
