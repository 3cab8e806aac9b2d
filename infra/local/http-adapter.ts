import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ANSWER_HEADERS } from '../../lib/http/chain';
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS } from '../../lib/http/cors';
import { corsMethods, functionTimeoutSeconds, isCatchAll, type RouteRow, routeFor, routeKeyOf, routes } from '../../lib/routes';
import { httpApiLimits, overLambdaResponseLimit } from '../../lib/runtime/aws-limits';
import { asFunction } from './iam';
import { OUTBOX_PATH, serveOutbox } from './outbox';
import { instrumentClient, type RequestTrace, sequentialRoundTrips, type TraceMode, timeInDynamoDb, traceStorage } from './trace';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** The gateway's request limit; the functions apply the contract's 64 KiB limit themselves. */
const GATEWAY_MAX_BODY = httpApiLimits.requestBytes;
const TEXT_TYPES = /^(text\/|application\/(?:[\w.+-]+\+)?(json|xml|javascript)|application\/x-www-form-urlencoded)/i;

export const REPO_ROOT = join(import.meta.dirname, '..', '..');

/**
 * Serves the route table the way an HTTP API does: each request becomes a payload-v2 event for
 * the row's own handler module (imported once, like a warm container), and anything no row
 * serves goes to the `$default` row.
 */
export async function createLocalHttpServer(
  corsOrigin = '*',
  tracing: TraceMode = 'off',
  outbox?: string,
  /** The least time a function gets (LOCAL_FUNCTION_TIMEOUT_SECONDS); its row's own when longer. */
  leastTimeoutSeconds = 0,
): Promise<Server> {
  if (tracing !== 'off') instrumentClient((await import('../../lib/data/db')).documentClient, tracing);
  const rows = Object.entries(routes) as [string, RouteRow][];
  const handlers = new Map<string, Handler>();
  for (const [id, row] of rows) {
    const module = (await import(join(REPO_ROOT, row.entry))) as { handler: Handler };
    handlers.set(id, module.handler);
  }
  const fallbackId = rows.find(([, row]) => isCatchAll(row))![0];
  const gateway: LocalGateway = { handlers, fallbackId, corsOrigin, tracing, outbox, leastTimeoutSeconds };

  return createServer((req, res) => {
    serve(gateway, req, res).catch((error) => {
      // Only the adapter itself can end up here (handlers answer every error themselves).
      console.error('local adapter error', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/problem+json', ...ANSWER_HEADERS });
      res.end(
        JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500, detail: 'Local adapter failure.' }),
      );
    });
  });
}

/** What the local HTTP API serves with: the routes' handlers and the server's settings. */
interface LocalGateway {
  handlers: Map<string, Handler>;
  /** The `$default` row's id: what serves a request no other row does. */
  fallbackId: string;
  corsOrigin: string;
  tracing: TraceMode;
  outbox?: string;
  leastTimeoutSeconds: number;
}

async function serve(gateway: LocalGateway, req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://local');
  const method = (req.method ?? 'GET').toUpperCase();
  const cors = corsHeaders(gateway.corsOrigin);
  // The answers below that stand for API Gateway's own (this preflight, the 413 over its request
  // limit, its 503 and 500) carry its headers only: an HTTP API cannot add a header to what it
  // answers itself, so the local stack does not either. Every answer a function makes carries
  // ANSWER_HEADERS (lib/http/chain.ts), as do the local stack's own paths (the outbox).
  if (method === 'OPTIONS' && req.headers['access-control-request-method']) {
    res.writeHead(204, cors).end();
    return;
  }
  const body = await readBody(req);
  // The local stack's own path (infra/local/outbox.ts), in front of the route table, never in it.
  if (gateway.outbox && url.pathname === OUTBOX_PATH) {
    answerOutbox(res, serveOutbox(gateway.outbox, url, method), cors);
    return;
  }
  if (body === 'too large') {
    res.writeHead(413, { 'content-type': 'application/json', ...cors }).end('{"message":"Request Entity Too Large"}');
    return;
  }
  const served = routeFor(method, url.pathname);
  const routeId = served?.id ?? gateway.fallbackId;
  const pathParameters = served && Object.keys(served.params).length > 0 ? served.params : undefined;
  const row = routes[routeId as keyof typeof routes] as RouteRow;
  const event = toEvent(req, url, method, row, pathParameters, body);
  const { outcome, trace, functionMs } = await invokeRoute(gateway, routeId, row, event);
  if ('gateway' in outcome) {
    // What API Gateway itself answers when the integration fails: its own JSON, not problem+json.
    res.writeHead(outcome.gateway.status, { 'content-type': 'application/json', ...cors }).end(outcome.gateway.body);
    return;
  }
  const result = outcome.result;
  const headers = { ...cors, ...(result.headers as Record<string, string> | undefined) };
  if (trace) Object.assign(headers, traceHeaders(trace, functionMs, gateway.tracing === 'capacity'));
  const payload = result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(payload);
}

function corsHeaders(corsOrigin: string): Record<string, string> {
  return {
    'access-control-allow-origin': corsOrigin,
    'access-control-allow-headers': CORS_ALLOW_HEADERS.join(','),
    'access-control-expose-headers': CORS_EXPOSE_HEADERS.join(','),
    'access-control-allow-methods': corsMethods().join(','),
    'access-control-max-age': '600',
  };
}

function answerOutbox(res: ServerResponse, answer: ReturnType<typeof serveOutbox>, cors: Record<string, string>) {
  const type = answer.problem ? 'application/problem+json' : 'application/json';
  const allow = answer.status === 405 ? { allow: 'GET' } : {};
  res.writeHead(answer.status, { 'content-type': type, ...allow, ...cors, ...ANSWER_HEADERS }).end(JSON.stringify(answer.body));
}

/**
 * Runs the row's handler within the gateway's limits, traced when tracing is on; the function's
 * own time is measured alone, since the gateway's checks are not the function's time.
 */
async function invokeRoute(gateway: LocalGateway, routeId: string, row: RouteRow, event: APIGatewayProxyEventV2) {
  // Lambda's timeout is wall-clock time with a CPU of the function's own; here every function
  // shares the machine's, so a busy machine may be given more (LOCAL_FUNCTION_TIMEOUT_SECONDS).
  const deadline = Date.now() + Math.max(functionTimeoutSeconds(row), gateway.leastTimeoutSeconds) * 1000;
  const context = {
    awsRequestId: randomUUID(),
    functionName: `local-${routeId}`,
    getRemainingTimeInMillis: () => deadline - Date.now(),
  } as unknown as Context;
  const trace: RequestTrace | undefined = gateway.tracing !== 'off' ? { calls: [] } : undefined;
  const startedAt = performance.now();
  let finishedAt = Number.NaN;
  const invoke = () =>
    asFunction(row, () => gateway.handlers.get(routeId)!(event, context)).finally(() => {
      finishedAt = performance.now();
    });
  const outcome = await withinGatewayLimits(trace ? traceStorage.run(trace, invoke) : invoke());
  return { outcome, trace, functionMs: finishedAt - startedAt };
}

/** What a traced request's answer tells of its DynamoDB calls and its time. */
function traceHeaders(trace: RequestTrace, functionMs: number, withCapacity: boolean): Record<string, string> {
  return {
    'x-trace-dynamodb-calls': String(trace.calls.length),
    'x-trace-dynamodb-sequential': String(sequentialRoundTrips(trace.calls)),
    ...(withCapacity && { 'x-trace-dynamodb-capacity': String(trace.calls.reduce((sum, call) => sum + call.capacityUnits, 0)) }),
    'x-trace-dynamodb-commands': trace.calls.map((call) => call.command.replace(/Command$/, '')).join(','),
    'x-trace-total-ms': functionMs.toFixed(3),
    'x-trace-dynamodb-ms': timeInDynamoDb(trace.calls).toFixed(3),
  };
}

type GatewayOutcome = { result: APIGatewayProxyStructuredResultV2 } | { gateway: { status: number; body: string } };

/**
 * The HTTP API's limits on an integration: it gives up after 30 s (503), and a function answer
 * over Lambda's 6 MB (counted on the JSON the function returns, a base64 body as its text) fails
 * the invocation (500). Enforced here so that a test meets them before AWS does.
 */
export async function withinGatewayLimits(invocation: Promise<APIGatewayProxyStructuredResultV2>): Promise<GatewayOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<GatewayOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve({ gateway: { status: 503, body: '{"message":"Service Unavailable"}' } }),
      httpApiLimits.integrationTimeoutMs,
    );
  });
  try {
    const outcome = await Promise.race([invocation.then((result): GatewayOutcome => ({ result })), timedOut]);
    if ('result' in outcome && overLambdaResponseLimit(outcome.result)) {
      console.error('local gateway: the function answered more than Lambda returns (6 MB); AWS would answer 500');
      return { gateway: { status: 500, body: '{"message":"Internal Server Error"}' } };
    }
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= GATEWAY_MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > GATEWAY_MAX_BODY ? 'too large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function toEvent(
  req: IncomingMessage,
  url: URL,
  method: string,
  row: RouteRow,
  pathParameters: Record<string, string> | undefined,
  body: Buffer,
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  // As API Gateway does: the client's X-Forwarded-* are not passed on as such (AWS folds them into
  // `Forwarded`), and the gateway's own say where the request came from and how (http: no TLS here).
  for (const name of ['x-forwarded-for', 'x-forwarded-port', 'x-forwarded-proto', 'x-forwarded-host']) delete headers[name];
  headers['x-forwarded-for'] = req.socket.remoteAddress ?? '127.0.0.1';
  headers['x-forwarded-port'] = String(req.socket.localPort ?? '');
  headers['x-forwarded-proto'] = 'http';
  // What API Gateway does with a text body that is not UTF-8 is not documented; the adapter hands
  // such bytes over as they came (base64), so that the function's own check sees and refuses them.
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '') && isUtf8(body);
  const routeKey = routeKeyOf(row);
  const now = new Date();
  const query = Object.fromEntries(url.searchParams.entries());
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : isText ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !isText,
  };
}
