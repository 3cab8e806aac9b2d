/**
 * CloudWatch metrics as embedded-metric-format log lines (no API calls, no IAM), for every kind
 * of function: HTTP routes, WebSocket routes and the stream consumer. Written by hand for the
 * same cold-start reason as the logger (lib/runtime/logger.ts); the format is CloudWatch's EMF
 * specification. METRICS_DISABLED=true turns them off (the local stack and the tests do).
 */

/** The CloudWatch namespace of the service's own metrics (the dashboard reads the same). */
export const METRICS_NAMESPACE = 'TaskBoard';
export const SERVICE = 'task-board';

/** Read once at cold start, like every setting. */
const enabled = process.env.METRICS_DISABLED !== 'true';

/** One EMF line: `value` of metric `name` (a Count unless said otherwise) under `dimensions`. */
export function emitMetric(name: string, dimensions: Record<string, string>, value = 1, unit = 'Count'): void {
  if (!enabled) return;
  const line = {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        { Namespace: METRICS_NAMESPACE, Dimensions: [Object.keys(dimensions)], Metrics: [{ Name: name, Unit: unit }] },
      ],
    },
    ...dimensions,
    [name]: value,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

let coldStart = true;

/** Counts the container's cold start, once: the first call of any handler in this process. */
export function countColdStart(fallbackName: string): void {
  if (!coldStart) return;
  coldStart = false;
  emitMetric('ColdStart', { service: SERVICE, function_name: process.env.AWS_LAMBDA_FUNCTION_NAME ?? fallbackName });
}
