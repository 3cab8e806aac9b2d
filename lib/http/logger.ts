import type { Logger as SdkLogger } from '@smithy/types';

/**
 * Structured JSON logs, one line per call on stdout (CloudWatch Logs keeps each as one event).
 * Hand-written rather than Powertools Logger: the service uses three levels and per-call keys,
 * and Powertools (logger, metrics and their commons, 33 KiB) cost about 2 ms of every cold
 * start, a third of the budget the cold-start target leaves above the SDK (docs/performance.md).
 * LOG_LEVEL (DEBUG, INFO, WARN, ERROR, SILENT; default INFO) is read once at cold start.
 */
const LEVELS = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, SILENT: 100 } as const;
type Level = Exclude<keyof typeof LEVELS, 'SILENT'>;

function thresholdOf(value: string | undefined): number {
  const name = (value ?? 'INFO').toUpperCase();
  if (!(name in LEVELS)) throw new Error(`LOG_LEVEL must be one of ${Object.keys(LEVELS).join(', ')}, not ${value}`);
  return LEVELS[name as keyof typeof LEVELS];
}

/** Errors become their name, message, stack and cause; everything else as JSON has it. */
function errorsAsObjects(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const { name, message, stack, cause } = value;
  return { name, message, stack, ...(cause === undefined ? {} : { cause }) };
}

export class Logger {
  private readonly threshold: number;

  constructor(
    private readonly service: string,
    level: string | undefined,
  ) {
    this.threshold = thresholdOf(level);
  }

  debug(message: string, fields?: Record<string, unknown>): void {
    this.write('DEBUG', message, fields);
  }

  info(message: string, fields?: Record<string, unknown>): void {
    this.write('INFO', message, fields);
  }

  warn(message: string, fields?: Record<string, unknown>): void {
    this.write('WARN', message, fields);
  }

  error(message: string, fields?: Record<string, unknown>): void {
    this.write('ERROR', message, fields);
  }

  private write(level: Level, message: string, fields: Record<string, unknown> | undefined): void {
    if (LEVELS[level] < this.threshold) return;
    const line = {
      level,
      message,
      timestamp: new Date().toISOString(),
      service: this.service,
      // Ties the line to its X-Ray trace; Lambda sets this per invocation.
      xray_trace_id: process.env._X_AMZN_TRACE_ID,
      ...fields,
    };
    process.stdout.write(`${JSON.stringify(line, errorsAsObjects)}\n`);
  }
}

export const logger = new Logger('task-board', process.env.LOG_LEVEL);

/**
 * The logger handed to the AWS SDK clients. The SDK's logger middleware deep-copies every
 * command's input and output (filtering sensitive fields) to pass them to `logger.info`, even
 * when its default no-op logger then drops them: about 0.2 ms of CPU for a 100-card tree read.
 * The SDK calls `info`, `error` and `trace` only when they exist, so this logger has none of
 * them (failed calls are logged once, by the request log); its warnings go to our log.
 */
export const sdkLogger = {
  debug: () => {},
  warn: (...args: unknown[]) => logger.warn('AWS SDK warning', { detail: args.map(String).join(' ') }),
} as unknown as SdkLogger;
