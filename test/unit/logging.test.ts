import type { RouteRow } from '../../lib/routes';
import { routes } from '../../lib/routes';
import { Logger, sdkLogger } from '../../lib/runtime/logger';

/**
 * What an operator reads in CloudWatch: one JSON object per line, filtered by LOG_LEVEL, errors
 * as name/message/stack; and metric lines in CloudWatch's embedded metric format.
 */
function captureStdout(run: () => void): Record<string, any>[] {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return lines.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line));
}

describe('logger', () => {
  it('writes one JSON line per call with level, message, service, time and the fields', () => {
    const [line] = captureStdout(() => new Logger('task-board', 'INFO').info('request', { route: 'cards.get', status: 404 }));
    expect(line).toMatchObject({ level: 'INFO', message: 'request', service: 'task-board', route: 'cards.get', status: 404 });
    expect(Date.parse(line!.timestamp)).not.toBeNaN();
  });

  it('drops lines below LOG_LEVEL and keeps those at or above it', () => {
    const logger = new Logger('task-board', 'warn');
    const lines = captureStdout(() => {
      logger.debug('d');
      logger.info('i');
      logger.warn('w');
      logger.error('e');
    });
    expect(lines.map((l) => l.level)).toEqual(['WARN', 'ERROR']);
    expect(captureStdout(() => new Logger('task-board', 'SILENT').error('e'))).toEqual([]);
  });

  it('defaults to INFO and refuses an unknown level at start instead of logging nothing', () => {
    const logger = new Logger('task-board', undefined);
    const lines = captureStdout(() => {
      logger.debug('d');
      logger.info('i');
    });
    expect(lines.map((l) => l.level)).toEqual(['INFO']);
    expect(() => new Logger('task-board', 'VERBOSE')).toThrow(/LOG_LEVEL/);
  });

  it("accepts Lambda's level names and treats an empty LOG_LEVEL as unset", () => {
    const levels = (setting: string) =>
      captureStdout(() => {
        const logger = new Logger('task-board', setting);
        logger.debug('d');
        logger.info('i');
        logger.error('e');
      }).map((l) => l.level);
    expect(levels('trace')).toEqual(['DEBUG', 'INFO', 'ERROR']);
    expect(levels('FATAL')).toEqual(['ERROR']);
    expect(levels('')).toEqual(['INFO', 'ERROR']);
  });

  it("keeps an AWS error's own fields, and never throws on circular values or BigInts", () => {
    const awsError = Object.assign(new Error('Transaction cancelled'), {
      name: 'TransactionCanceledException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400, requestId: 'REQ123' },
      CancellationReasons: [{ Code: 'ConditionalCheckFailed', Item: { title: { S: 'a user title' } } }],
    });
    const shared = { id: 'shared' };
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    const first = new Error('first');
    const second = new Error('second', { cause: first });
    (first as Error & { cause?: unknown }).cause = second;
    const [line] = captureStdout(() =>
      new Logger('task-board', 'ERROR').error('request failed', {
        error: awsError,
        loop,
        chain: second,
        count: 10n,
        both: [shared, shared],
      }),
    );
    expect(line!.error).toMatchObject({
      name: 'TransactionCanceledException',
      $fault: 'client',
      $metadata: { requestId: 'REQ123' },
      CancellationReasons: [{ Code: 'ConditionalCheckFailed' }],
    });
    expect(line!.loop).toEqual({ name: 'loop', self: '[Circular]' });
    expect(line!.chain).toMatchObject({ message: 'second', cause: { message: 'first', cause: '[Circular]' } });
    expect(line!.count).toBe('10');
    // Shared is not circular: both places print it whole.
    expect(line!.both).toEqual([{ id: 'shared' }, { id: 'shared' }]);
    // A cancelled transaction's returned items are user content and stay out of the log.
    expect(line!.error.CancellationReasons).toEqual([{ Code: 'ConditionalCheckFailed' }]);
  });

  it('writes an error as its name, message, stack and cause', () => {
    const error = new TypeError('boom', { cause: new Error('root') });
    const [line] = captureStdout(() => new Logger('task-board', 'ERROR').error('request failed', { error }));
    expect(line!.error).toMatchObject({ name: 'TypeError', message: 'boom', cause: { name: 'Error', message: 'root' } });
    expect(line!.error.stack).toContain('TypeError: boom');
  });
});

describe('the logger given to the AWS SDK clients', () => {
  it("has no info method, so the SDK skips copying every command's input and output for it", () => {
    // The SDK calls logger.info?.(...) with both filtered through the command's schema first.
    expect((sdkLogger as { info?: unknown }).info).toBeUndefined();
    expect((sdkLogger as { error?: unknown }).error).toBeUndefined();
  });
});

describe('metrics', () => {
  const row: RouteRow = routes['cards.create'];

  function freshMetrics(disabled?: string) {
    const saved = process.env.METRICS_DISABLED;
    if (disabled === undefined) delete process.env.METRICS_DISABLED;
    else process.env.METRICS_DISABLED = disabled;
    try {
      let module: typeof import('../../lib/http/metrics') | undefined;
      jest.isolateModules(() => {
        module = require('../../lib/http/metrics');
      });
      return module!.routeMetrics(row);
    } finally {
      process.env.METRICS_DISABLED = saved;
    }
  }
  const request = (statusCode: number) => ({ response: { statusCode } }) as any;

  it('counts a cold start once per container and the route metric on each success, as EMF', () => {
    const middleware = freshMetrics();
    const lines = captureStdout(() => {
      middleware.before!(request(0));
      middleware.after!(request(201));
      middleware.before!(request(0));
      middleware.after!(request(201));
    });
    expect(lines.map((l) => l._aws.CloudWatchMetrics[0].Metrics[0].Name)).toEqual(['ColdStart', row.metric, row.metric]);
    const success = lines[1]!;
    expect(success._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: 'TaskBoard',
      Dimensions: [['service']],
      Metrics: [{ Name: row.metric, Unit: 'Count' }],
    });
    expect(success).toMatchObject({ service: 'task-board', [row.metric!]: 1 });
    expect(typeof success._aws.Timestamp).toBe('number');
  });

  it('counts nothing for a failed request, nor anything when METRICS_DISABLED=true', () => {
    const middleware = freshMetrics();
    captureStdout(() => middleware.before!(request(0)));
    expect(captureStdout(() => middleware.after!(request(409)))).toEqual([]);
    const disabled = freshMetrics('true');
    expect(
      captureStdout(() => {
        disabled.before!(request(0));
        disabled.after!(request(201));
      }),
    ).toEqual([]);
  });

  it('counts nothing for an Idempotency-Key replay: it created nothing, so the dashboards must not count it', () => {
    const middleware = freshMetrics();
    captureStdout(() => middleware.before!(request(0)));
    const replay = { response: { statusCode: 201, headers: { 'idempotent-replayed': 'true' } } } as any;
    expect(captureStdout(() => middleware.after!(replay))).toEqual([]);
    const first = captureStdout(() => middleware.after!(request(201)));
    expect(first.map((l) => l._aws.CloudWatchMetrics[0].Metrics[0].Name)).toEqual([row.metric]);
  });
});
