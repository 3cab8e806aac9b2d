import { createComment } from '../../lib/data/comments';
import { route } from '../../lib/http/route';
import { commentsCreate } from '../../lib/rows/comments';

/** The card came with the access check: a comment costs one round trip more, its transaction. */
export const handler = route(commentsCreate, async ({ scope, body }) => ({
  status: 201,
  body: await createComment(scope, body.body),
}));
