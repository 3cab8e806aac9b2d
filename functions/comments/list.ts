import { listComments } from '../../lib/data/comments';
import { route } from '../../lib/http/route';
import { commentsList } from '../../lib/rows/comments';

/** The access check, then one Query of the card's comment range. */
export const handler = route(commentsList, async ({ scope, params }) => ({
  status: 200,
  body: await listComments(scope, params.after, params.limit),
}));
