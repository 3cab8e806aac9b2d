import type { RouteRow } from '../rows/row';
import { countColdStart, emitMetric, SERVICE } from '../runtime/metrics';
import { REPLAYED_HEADER, type RouteMiddleware } from './types';

/**
 * The ColdStart count once per container, and the row's business metric on each success; a
 * replayed answer (a retried Idempotency-Key) created nothing and counts nothing.
 */
export function routeMetrics(row: RouteRow): RouteMiddleware {
  return {
    before: () => countColdStart(row.entry),
    after: ({ response }) => {
      if (!row.metric || !response || (response.statusCode ?? 500) >= 300) return;
      if (response.headers?.[REPLAYED_HEADER] === 'true') return;
      emitMetric(row.metric, { service: SERVICE });
    },
  };
}
