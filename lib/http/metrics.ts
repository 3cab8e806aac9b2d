import type { RouteRow } from '../routes';
import { countColdStart, emitMetric, SERVICE } from '../runtime/metrics';
import type { RouteMiddleware } from './types';

/** The ColdStart count once per container, and the row's business metric on each success. */
export function routeMetrics(row: RouteRow): RouteMiddleware {
  return {
    before: () => countColdStart(row.entry),
    after: ({ response }) => {
      if (row.metric && response && (response.statusCode ?? 500) < 300) emitMetric(row.metric, { service: SERVICE });
    },
  };
}
