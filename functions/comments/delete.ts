import { deleteComment } from '../../lib/data/comments';
import { route } from '../../lib/http/route';
import { commentsDelete } from '../../lib/rows/comments';

export const handler = route(commentsDelete, async ({ scope }) => {
  await deleteComment(scope);
  return { status: 204 };
});
