import { updateComment } from '../../lib/data/comments';
import { route } from '../../lib/http/route';
import { commentsUpdate } from '../../lib/rows/comments';

/** The access check read the comment and its card: the author rule and the write need no other read. */
export const handler = route(commentsUpdate, async ({ scope, body }) => ({
  status: 200,
  body: await updateComment(scope, body.body),
}));
