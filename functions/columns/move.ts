import { moveColumn } from '../../lib/data/columns';
import { route } from '../../lib/http/route';
import { columnsMove } from '../../lib/rows/columns';

/** Neighbour columns are fetched with the column, in the access check's two round trips. */
export const handler = route(columnsMove, async ({ scope, body }) => ({ status: 200, body: await moveColumn(scope, body) }), {
  related: (body) => ({ columns: [body.before_id, body.after_id] }),
});
