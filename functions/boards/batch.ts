import { applyBatch, type BatchRequest, batchRelatedIds, type ColumnTops, queryColumnTops } from '../../lib/data/batch';
import { heldCount } from '../../lib/http/rate-limit';
import { route } from '../../lib/http/route';
import { boardsBatch } from '../../lib/rows/boards';

/**
 * Every id the batch names is read with the access check, and the highest cards of the columns
 * it appends to beside its second round trip; the rate limiter's count (one per operation) rides
 * in the batch's own transaction. No ETag: the answer is a list of results, not one entity.
 */
export const handler = route<typeof boardsBatch, ColumnTops>(
  boardsBatch,
  async ({ scope, body, preloaded }) => ({
    status: 200,
    body: { results: await applyBatch(scope, body as BatchRequest, preloaded, heldCount()) },
  }),
  {
    related: (body) => batchRelatedIds(body as BatchRequest),
    preload: ({ boardId }, body) => queryColumnTops(boardId, body as BatchRequest),
  },
);
