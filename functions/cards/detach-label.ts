import { detachLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';
import { cardsLabelsDetach } from '../../lib/rows/cards';

export const handler = route(
  cardsLabelsDetach,
  async ({ scope, params, conditions }) => {
    const { card, etag } = await detachLabel(scope, params.label_id, conditions.ifMatch);
    return { status: 200, body: card, headers: { etag } };
  },
  { related: (_body, params) => ({ labels: [params.label_id as string] }) },
);
