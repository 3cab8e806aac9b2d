import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { RouteRow } from '../routes';
import type { RouteMiddleware } from './types';

/**
 * CloudWatch metrics as embedded-metric-format log lines (Powertools; no API calls, no IAM):
 * a ColdStart count once per container, and the row's business metric on each success.
 * POWERTOOLS_METRICS_DISABLED=true turns them off (the local stack does).
 */
export const metrics = new Metrics({ namespace: 'TaskBoard', serviceName: 'task-board' });

export function routeMetrics(row: RouteRow): RouteMiddleware {
  const publish = () => {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  };
  return {
    before: () => {
      metrics.captureColdStartMetric();
    },
    after: ({ response }) => {
      if (row.metric && response && (response.statusCode ?? 500) < 300) metrics.addMetric(row.metric, MetricUnit.Count, 1);
      publish();
    },
    onError: publish,
  };
}
