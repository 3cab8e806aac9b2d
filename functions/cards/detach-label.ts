import { detachLabel } from '../../lib/data/labels';
import { route } from '../../lib/http/route';
import { cardsLabelsDetach } from '../../lib/rows/cards';

export const handler = route(
  cardsLabelsDetach,
  async ({ scope, params }) => ({ status: 200, body: await detachLabel(scope, params.label_id) }),
  { related: (_body, params) => ({ labels: [params.label_id as string] }) },
);
