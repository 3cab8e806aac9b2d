import type { RouteRow } from '../../lib/routes';
import { routes } from '../../lib/routes';
import { Logger, sdkLogger } from '../../lib/runtime/logger';
import { accessClaims, makeSigner, signJwt } from '../support/tokens';

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

describe('the invocation on every line', () => {
  // The module's own state (warm functions, the current invocation) is fresh for each case.
  function freshLogger(env: Record<string, string | undefined> = {}) {
    const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
    Object.assign(process.env, env);
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete process.env[name];
    try {
      let module: typeof import('../../lib/runtime/logger') | undefined;
      jest.isolateModules(() => {
        module = require('../../lib/runtime/logger');
      });
      return module!;
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }
  const invocationOf = (line: Record<string, unknown>) => ({
    function_request_id: line.function_request_id,
    function_name: line.function_name,
    cold_start: line.cold_start,
    xray_trace_id: line.xray_trace_id,
  });

  it('carries the Lambda request id, function name, cold-start flag and X-Ray trace id, cold only on the first invocation', () => {
    const { Logger, beginInvocation } = freshLogger({ AWS_LAMBDA_FUNCTION_NAME: 'TaskBoard-dev-BoardsList' });
    const logger = new Logger('task-board', 'DEBUG');
    const trace = process.env._X_AMZN_TRACE_ID;
    try {
      const lines = captureStdout(() => {
        logger.info('at cold start, before any invocation');
        process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
        beginInvocation({ awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678', functionName: 'TaskBoard-dev-BoardsList' });
        logger.debug('first');
        logger.error('first, failing', { error: new Error('boom') });
        process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-00000000000000000000000b;Parent=53995c3f42cd8ad9;Sampled=0';
        beginInvocation({ awsRequestId: 'd1e2f3a4-7b61-11e6-9a41-93e812345678', functionName: 'TaskBoard-dev-BoardsList' });
        logger.warn('second');
      });
      expect(lines.map(invocationOf)).toEqual([
        { function_name: 'TaskBoard-dev-BoardsList', cold_start: true },
        {
          function_request_id: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
          function_name: 'TaskBoard-dev-BoardsList',
          cold_start: true,
          xray_trace_id: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
        },
        {
          function_request_id: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
          function_name: 'TaskBoard-dev-BoardsList',
          cold_start: true,
          xray_trace_id: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
        },
        {
          function_request_id: 'd1e2f3a4-7b61-11e6-9a41-93e812345678',
          function_name: 'TaskBoard-dev-BoardsList',
          cold_start: false,
          xray_trace_id: 'Root=1-5759e988-00000000000000000000000b;Parent=53995c3f42cd8ad9;Sampled=0',
        },
      ]);
    } finally {
      if (trace === undefined) delete process.env._X_AMZN_TRACE_ID;
      else process.env._X_AMZN_TRACE_ID = trace;
    }
  });

  it('counts no cold start in a container that provisioned concurrency initialised ahead of its requests', () => {
    const { Logger, beginInvocation } = freshLogger({ AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' });
    const [line] = captureStdout(() => {
      beginInvocation({ awsRequestId: 'r1', functionName: 'f' });
      new Logger('task-board', 'INFO').info('x');
    });
    expect(line).toMatchObject({ function_request_id: 'r1', cold_start: false });
  });

  it('keeps each invocation’s own request id when a local runner serves many at once in one process', async () => {
    const { Logger, beginInvocation, inInvocationScope } = freshLogger();
    const logger = new Logger('task-board', 'INFO');
    const lines: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      let releaseFirst!: () => void;
      const firstWaits = new Promise<void>((resolve) => {
        releaseFirst = resolve;
      });
      const first = inInvocationScope(async () => {
        beginInvocation({ awsRequestId: 'first', functionName: 'local-boards.list' });
        await firstWaits; // the second invocation starts and logs meanwhile
        logger.info('first');
      });
      const second = inInvocationScope(async () => {
        beginInvocation({ awsRequestId: 'second', functionName: 'local-boards.list' });
        logger.info('second');
        releaseFirst();
      });
      await Promise.all([first, second]);
    } finally {
      spy.mockRestore();
    }
    const parsed = lines.map((line) => JSON.parse(line));
    expect(parsed.map((line) => [line.message, line.function_request_id, line.cold_start])).toEqual([
      ['second', 'second', false],
      ['first', 'first', true],
    ]);
  });
});

describe('why a token was refused, at DEBUG', () => {
  const LOCAL_ISSUER = 'http://cognito-local.localhost/local_unitPool';
  const CLIENT = 'unit-local-client';

  function freshVerifier(env: Record<string, string | undefined>) {
    const names = ['TOKEN_ISSUER', 'USER_POOL_CLIENT_ID', 'TOKEN_JWKS', 'LOG_LEVEL'];
    const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
    for (const name of names) {
      const value = name in env ? env[name] : saved[name];
      if (value === undefined || name === 'TOKEN_JWKS') delete process.env[name];
      if (value !== undefined) process.env[name] = value;
    }
    try {
      let module: typeof import('../../lib/auth/verifier') | undefined;
      jest.isolateModules(() => {
        module = require('../../lib/auth/verifier');
      });
      return module!;
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }
  const signer = makeSigner();
  const local = { TOKEN_ISSUER: LOCAL_ISSUER, USER_POOL_CLIENT_ID: CLIENT, LOG_LEVEL: 'DEBUG' };

  async function refusal(verify: (token: string) => Promise<unknown>, token: string) {
    let refused: unknown;
    const lines: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      await verify(token).catch((error: unknown) => {
        refused = error;
      });
    } finally {
      spy.mockRestore();
    }
    return { refused: refused as { kind?: string; detail?: string } | undefined, lines };
  }

  it('verifies a local token with the keys handed over in TOKEN_JWKS: no fetch, which SAM’s containers could not make', async () => {
    const { verifyAccessToken } = freshVerifier({ ...local, TOKEN_JWKS: JSON.stringify(signer.jwks) });
    const token = signer.sign(accessClaims(LOCAL_ISSUER, CLIENT, { sub: 'user-1' }));
    await expect(verifyAccessToken(token)).resolves.toMatchObject({ id: 'user-1' });
  });

  it('says why a token was refused, and what to do when the keys are the setup’s fault, never writing the token', async () => {
    // As SAM ran it before: an http issuer and no keys handed over.
    const withoutKeys = freshVerifier(local);
    const token = signer.sign(accessClaims(LOCAL_ISSUER, CLIENT));
    const noKeys = await refusal(withoutKeys.verifyAccessToken, token);
    expect(noKeys.refused).toMatchObject({ kind: 'unauthorized', detail: withoutKeys.INVALID_TOKEN });
    const [line] = noKeys.lines.map((text) => JSON.parse(text));
    expect(line).toMatchObject({ level: 'DEBUG', message: 'access token refused' });
    expect(line.hint).toContain('TOKEN_JWKS');
    expect(noKeys.lines.join('')).not.toContain(token.split('.')[1]);

    // A forged signature: the reason names it; neither the token nor its parts are written.
    const withKeys = freshVerifier({ ...local, TOKEN_JWKS: JSON.stringify(signer.jwks) });
    const forged = signJwt(
      { alg: 'RS256', typ: 'JWT', kid: signer.kid },
      accessClaims(LOCAL_ISSUER, CLIENT),
      makeSigner().privateKey,
    );
    const bad = await refusal(withKeys.verifyAccessToken, forged);
    expect(bad.refused).toMatchObject({ kind: 'unauthorized' });
    expect(bad.lines.map((text) => JSON.parse(text))).toEqual([
      expect.objectContaining({ level: 'DEBUG', message: 'access token refused', reason: 'Invalid signature' }),
    ]);
    for (const part of forged.split('.')) expect(bad.lines.join('')).not.toContain(part);

    // Expired: the reason says so (at INFO and above, nothing is written).
    const expired = signer.sign(accessClaims(LOCAL_ISSUER, CLIENT, { iat: 1_000_000, exp: 1_000_600 }));
    const late = await refusal(withKeys.verifyAccessToken, expired);
    expect(JSON.parse(late.lines[0]!)).toMatchObject({ reason: expect.stringMatching(/^Token expired at 1970-01-12T/) });
    const quiet = freshVerifier({ ...local, LOG_LEVEL: 'INFO', TOKEN_JWKS: JSON.stringify(signer.jwks) });
    expect((await refusal(quiet.verifyAccessToken, expired)).lines).toEqual([]);
  });

  it('refuses TOKEN_JWKS at cold start for an https issuer (a deployed pool’s keys are always fetched) and when it is no JWKS', () => {
    expect(() =>
      freshVerifier({
        TOKEN_ISSUER: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_unitTest',
        TOKEN_JWKS: JSON.stringify(signer.jwks),
      }),
    ).toThrow(/TOKEN_JWKS is only for a local http:\/\/ issuer/);
    expect(() => freshVerifier({ ...local, TOKEN_JWKS: '{"keys":"none"}' })).toThrow(/TOKEN_JWKS must be the pool's JWKS/);
    expect(() => freshVerifier({ ...local, TOKEN_JWKS: 'not json' })).toThrow(/TOKEN_JWKS must be the pool's JWKS/);
  });
});
