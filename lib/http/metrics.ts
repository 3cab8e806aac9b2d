import type { RouteRow } from '../routes';
import type { RouteMiddleware } from './types';

/**
 * CloudWatch metrics as embedded-metric-format log lines (no API calls, no IAM): a ColdStart
 * count once per container, and the row's business metric on each success. Written by hand for
 * the same cold-start reason as the logger (lib/http/logger.ts); the format is CloudWatch's EMF
 * specification. METRICS_DISABLED=true turns them off (the local stack and the tests do).
 */
const METRICS_NAMESPACE = 'TaskBoard';
const SERVICE = 'task-board';

function emit(name: string, dimensions: Record<string, string>): void {
  const line = {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        { Namespace: METRICS_NAMESPACE, Dimensions: [Object.keys(dimensions)], Metrics: [{ Name: name, Unit: 'Count' }] },
      ],
    },
    ...dimensions,
    [name]: 1,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

let coldStart = true;

export function routeMetrics(row: RouteRow): RouteMiddleware {
  const enabled = process.env.METRICS_DISABLED !== 'true';
  return {
    before: () => {
      if (!coldStart) return;
      coldStart = false;
      if (enabled) emit('ColdStart', { service: SERVICE, function_name: process.env.AWS_LAMBDA_FUNCTION_NAME ?? row.entry });
    },
    after: ({ response }) => {
      if (enabled && row.metric && response && (response.statusCode ?? 500) < 300) emit(row.metric, { service: SERVICE });
    },
  };
}
