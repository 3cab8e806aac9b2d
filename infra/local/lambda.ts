import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { type FunctionRow, functionTimeoutSeconds } from '../../lib/routes';
import { REPO_ROOT } from './http-adapter';
import { asFunction } from './iam';
import { listen } from './processes';

/**
 * The local stack's stand-in for the Lambda Invoke API, for the functions another local service
 * invokes by name: the Cognito emulator's triggers (cognito-local calls a trigger through an AWS
 * SDK Lambda client pointed here). It answers `POST /2015-03-31/functions/<name>/invocations` as
 * Lambda does for a synchronous (RequestResponse) call: 200 with the handler's result as the
 * payload, or 200 with `X-Amz-Function-Error: Unhandled` and Lambda's error payload when the
 * handler throws or runs past its row's timeout; an unknown name is a 404
 * ResourceNotFoundException. The handler runs in this process, under its row's role stand-in
 * (infra/local/iam.ts), as the stream poller and the queue event source run theirs.
 */
export interface LocalLambdaServer {
  /** The endpoint a Lambda client is given (`http://127.0.0.1:<port>`). */
  endpoint: string;
  close(): Promise<void>;
}

type Handler = (event: unknown, context: object) => Promise<unknown>;

/** Lambda's limit on a synchronous invocation's request payload. */
const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/** A row's function name on the local stack (Lambda's names take no dots): `auth.message` → `local-auth-message`. */
export const localFunctionName = (row: Pick<FunctionRow, 'id'>) => `local-${row.id.replaceAll('.', '-')}`;

/** The name an invocation path carries: a bare name, or the function's ARN (with or without a version). */
function functionNameOf(pathPart: string): string {
  const name = decodeURIComponent(pathPart);
  const arn = /^arn:[^:]+:lambda:[^:]+:[^:]+:function:([^:]+)(:[^:]+)?$/.exec(name);
  return arn ? arn[1]! : name;
}

/** The Invoke API for `rows` on `port` (0: a free one), their handlers imported before it listens. */
export async function startLocalLambda(rows: readonly FunctionRow[], port = 0, host = '127.0.0.1'): Promise<LocalLambdaServer> {
  const functions: LocalFunctions = new Map();
  for (const row of rows) {
    const { handler } = (await import(join(REPO_ROOT, row.entry))) as { handler: Handler };
    functions.set(localFunctionName(row), { row, handler });
  }
  const server = createServer((req, res) => {
    invoke(functions, req, res).catch((error: unknown) => {
      console.error('local Lambda stand-in failed', error);
      if (!res.headersSent) serviceError(res, 500, 'ServiceException', 'The local Lambda stand-in failed');
      else res.destroy();
    });
  });
  const bound = await listen(server, port, host);
  return {
    endpoint: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

type LocalFunctions = Map<string, { row: FunctionRow; handler: Handler }>;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An error of the Invoke API itself (not the function's): its status, and its type in `x-amzn-errortype`. */
const serviceError = (res: ServerResponse, status: number, type: string, message: string) =>
  send(res, status, { Type: 'User', message }, { 'x-amzn-errortype': type });

/** One Invoke call: the request checked, the payload read and parsed, the function run. */
async function invoke(functions: LocalFunctions, req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const match = INVOKE_PATH.exec(url.pathname);
  if (!match || req.method !== 'POST') return serviceError(res, 404, 'UnknownOperationException', 'Unknown operation');
  const name = functionNameOf(match[1]!);
  const payload = await readPayload(req);
  if (payload === 'too large') {
    return serviceError(
      res,
      413,
      'RequestTooLargeException',
      `Request must be smaller than ${MAX_PAYLOAD_BYTES} bytes for the InvokeFunction operation`,
    );
  }
  const fn = functions.get(name);
  if (!fn) return serviceError(res, 404, 'ResourceNotFoundException', `Function not found: ${name}`);
  const type = req.headers['x-amz-invocation-type'] ?? 'RequestResponse';
  if (type !== 'RequestResponse') {
    return serviceError(
      res,
      400,
      'InvalidParameterValueException',
      `Only RequestResponse invocations are served here, not ${type}`,
    );
  }
  let event: unknown;
  try {
    const text = payload.toString('utf8');
    event = text === '' ? {} : JSON.parse(text);
  } catch {
    return serviceError(res, 400, 'InvalidRequestContentException', 'Could not parse request body into json');
  }
  await run(fn, name, event, res);
}

/** The request's payload; `'too large'` as soon as it passes Lambda's limit (the rest unread). */
async function readPayload(req: IncomingMessage): Promise<Buffer | 'too large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD_BYTES) return 'too large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Runs the function under its row's role stand-in and timeout, answering as Lambda does: 200 with
 * its result, or 200 with `X-Amz-Function-Error: Unhandled` and the error when it throws or times out.
 */
async function run(fn: { row: FunctionRow; handler: Handler }, name: string, event: unknown, res: ServerResponse) {
  const timeoutMs = functionTimeoutSeconds(fn.row) * 1000;
  const deadline = Date.now() + timeoutMs;
  const context = {
    awsRequestId: randomUUID(),
    functionName: name,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  const headers = { 'x-amz-executed-version': '$LATEST' };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () =>
        fail(
          Object.assign(new Error(`Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`), {
            name: 'Sandbox.Timedout',
          }),
        ),
      timeoutMs,
    );
  });
  try {
    const result = await Promise.race([asFunction(fn.row, () => fn.handler(event, context)), timedOut]);
    send(res, 200, result ?? null, headers);
  } catch (error) {
    const { name: errorType = 'Error', message: errorMessage = String(error) } = error as Error;
    console.error(`local function ${fn.row.id} failed`, error);
    send(res, 200, { errorType, errorMessage }, { ...headers, 'x-amz-function-error': 'Unhandled' });
  } finally {
    clearTimeout(timer);
  }
}
