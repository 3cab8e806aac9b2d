import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger as SdkLogger } from '@smithy/types';

/**
 * Structured JSON logs, one line per call on stdout (CloudWatch Logs keeps each as one event).
 * Hand-written rather than Powertools Logger: the service uses three levels and per-call keys,
 * and Powertools (logger, metrics and their commons, 33 KiB) cost about 2 ms of every cold
 * start, a third of the budget the cold-start target leaves above the SDK (docs/performance.md).
 * LOG_LEVEL (DEBUG, INFO, WARN, ERROR or SILENT; default INFO; Lambda's names TRACE and FATAL
 * mean DEBUG and ERROR) is read once at cold start, and an unknown value stops the cold start.
 */
const LEVELS = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, SILENT: 100 } as const;
type Level = Exclude<keyof typeof LEVELS, 'SILENT'>;
const ALIASES: Record<string, keyof typeof LEVELS> = { TRACE: 'DEBUG', WARNING: 'WARN', FATAL: 'ERROR', CRITICAL: 'ERROR' };

function thresholdOf(value: string | undefined): number {
  const given = (value || 'INFO').trim().toUpperCase();
  const name = ALIASES[given] ?? given;
  if (!(name in LEVELS)) throw new Error(`LOG_LEVEL must be one of ${Object.keys(LEVELS).join(', ')}, not ${value}`);
  return LEVELS[name as keyof typeof LEVELS];
}

/**
 * An error as loggable fields: name, message, stack, cause and its own fields (an AWS error's
 * $metadata, $fault, CancellationReasons), without the raw $response and without the items a
 * cancelled transaction may return (user content: titles, descriptions).
 */
function errorFields(error: Error): Record<string, unknown> {
  const { name, message, stack, cause } = error;
  const { $response: _response, CancellationReasons: reasons, ...own } = error as Error & Record<string, unknown>;
  return {
    ...own,
    name,
    message,
    stack,
    ...(Array.isArray(reasons) ? { CancellationReasons: reasons.map(({ Code, Message }) => ({ Code, Message })) } : {}),
    ...(cause === undefined ? {} : { cause }),
  };
}

/**
 * JSON for a log line that cannot throw on what it is given: errors as errorFields, a BigInt as
 * its digits, and a value that contains itself (directly or through an error's cause) cut at
 * the repeat with "[Circular]". The replacer is handed the object holding each value, which
 * keeps the stack of objects above the current one exact.
 */
function logJson(line: Record<string, unknown>): string {
  const holders: object[] = [];
  const originals: object[] = [];
  return JSON.stringify(line, function (this: object, _key: string, value: unknown) {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object' || value === null) return value;
    while (holders.length > 0 && holders.at(-1) !== this) {
      holders.pop();
      originals.pop();
    }
    if (originals.includes(value)) return '[Circular]';
    const written = value instanceof Error ? errorFields(value) : value;
    holders.push(written);
    originals.push(value);
    return written;
  });
}

/**
 * What ties a line to its invocation, by Powertools' names (so CloudWatch Logs Insights queries
 * written for it work): the Lambda request id (`function_request_id`, the one on the platform's
 * START/END/REPORT lines), `function_name`, and `cold_start`, true on the first invocation a
 * container serves. The X-Ray trace id is read per line from _X_AMZN_TRACE_ID, which Lambda sets
 * per invocation.
 */
interface InvocationFields {
  function_request_id?: string;
  function_name?: string;
  cold_start?: boolean;
}

/** The part of Lambda's context the log reads (a local runner may give less). */
export interface InvocationContext {
  awsRequestId?: string;
  functionName?: string;
}

/**
 * On Lambda a container serves one invocation at a time, so the current one is module state. A
 * local runner serving many functions and requests in one process gives each invocation a scope
 * of its own (`inInvocationScope`), which `beginInvocation` then fills instead.
 */
const scopes = new AsyncLocalStorage<InvocationFields>();
/** Read once at cold start: such a container serves no cold invocation. */
const provisioned = process.env.AWS_LAMBDA_INITIALIZATION_TYPE === 'provisioned-concurrency';
/** Before the first invocation (a cold start's own lines): the function's name and a cold start. */
let current: InvocationFields = { function_name: process.env.AWS_LAMBDA_FUNCTION_NAME, cold_start: !provisioned };
/** Functions that have had an invocation in this process: one on Lambda, each row's locally. */
const warm = new Set<string>();

/**
 * Called by each chain (HTTP, socket, stream, schedule) as an invocation starts. Provisioned
 * concurrency initialises a container before any request, so none of its invocations is cold.
 */
export function beginInvocation(context: InvocationContext | undefined): void {
  const name = context?.functionName || process.env.AWS_LAMBDA_FUNCTION_NAME;
  const key = name ?? '';
  const fields: InvocationFields = {
    function_request_id: context?.awsRequestId,
    function_name: name,
    cold_start: !warm.has(key) && !provisioned,
  };
  warm.add(key);
  const scope = scopes.getStore();
  if (scope) Object.assign(scope, fields);
  else current = fields;
}

/** Runs one invocation in a scope of its own (the local runners: many at once in one process). */
export function inInvocationScope<T>(run: () => T): T {
  return scopes.run({}, run);
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
    const invocation = {
      ...(scopes.getStore() ?? current),
      // Ties the line to its X-Ray trace; Lambda sets this per invocation.
      xray_trace_id: process.env._X_AMZN_TRACE_ID,
    };
    const line = { level, message, timestamp: new Date().toISOString(), service: this.service, ...invocation, ...fields };
    let text: string;
    try {
      text = logJson(line);
    } catch (error) {
      // A field whose toJSON throws: the line still says what happened, without the fields.
      let reason = 'unserialisable field';
      try {
        reason = String(error);
      } catch {}
      text = JSON.stringify({
        level,
        message,
        timestamp: line.timestamp,
        service: this.service,
        ...invocation,
        logError: reason,
      });
    }
    process.stdout.write(`${text}\n`);
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
