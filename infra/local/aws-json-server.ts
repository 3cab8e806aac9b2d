import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listen } from './processes';

/**
 * The HTTP side of the local stack's stand-ins for AWS services that speak an AWS JSON protocol
 * (awsJson1_0: SQS; awsJson1_1: KMS): one POST a call to `/`, the operation named by
 * `x-amz-target: <prefix>.<Operation>`, the input and output JSON documents of content type
 * `application/x-amz-json-1.x`, errors as a status with `{"__type", "message"}` (and, for a
 * query-compatible service such as SQS, the `x-amzn-query-error: <Code>;Sender|Receiver` header
 * from which @aws-sdk/client-sqs names its errors). A stand-in gives its operations as a map; this
 * module reads and checks the request, dispatches, and writes the answer or the error.
 *
 * The protocol-level refusals are those of AWS's front end (Coral), as the real services give them
 * and as dynalite (a DynamoDB emulator built from captured answers) reproduces them: a method
 * other than POST or another content type, 404 with the body `<UnknownOperationException/>`
 * (not JSON: the request was not taken for a JSON-protocol call, so the answer is not one); a body
 * that is not a JSON object, 400 `SerializationException`; a target the service does not have,
 * 400 `UnknownOperationException`; a body over the service's limit, 413 with an empty body, the
 * rest unread. A target the real service has but the stand-in does not implement is the
 * stand-in's own `unimplemented` error (so a missing operation is not mistaken for a typo).
 */

/** An error answered as AWS's JSON protocols answer it: the status, `__type` and `message`. */
export class AwsJsonError extends Error {
  constructor(
    /** The `__type` of the answer, e.g. `com.amazonaws.sqs#QueueDoesNotExist` or `NotFoundException`. */
    readonly type: string,
    message: string,
    readonly status = 400,
    /** A query-compatible service's error code (`x-amzn-query-error`); the `__type`'s name if none. */
    readonly queryCode?: string,
  ) {
    super(message);
  }
}

/** One operation: its input document in, its output document out (or an AwsJsonError thrown). */
export type AwsJsonOperation = (input: Record<string, unknown>, signal: AbortSignal) => unknown;

export interface AwsJsonService {
  /** For the log of an unexpected failure, e.g. `local SQS`. */
  name: string;
  /** `1.0` (awsJson1_0: SQS, DynamoDB) or `1.1` (awsJson1_1: KMS). */
  jsonVersion: '1.0' | '1.1';
  /** The target's service part, e.g. `AmazonSQS` or `TrentService`. */
  targetPrefix: string;
  /** The operations the stand-in implements, by name (`SendMessage`). */
  operations: Readonly<Record<string, AwsJsonOperation>>;
  /** The largest request body read; a larger one is refused with 413, unread. */
  maxBodyBytes: number;
  /** SQS's query-compatible JSON: every error also carries `x-amzn-query-error`. */
  queryCompatible?: boolean;
  /**
   * The service's SDK client module (`@aws-sdk/client-sqs`): an operation it has a command for
   * (`PurgeQueueCommand`) is one the real service has, answered with `unimplemented(message)`
   * when the stand-in lacks it; any other is UnknownOperationException.
   */
  sdk?: object;
  unimplemented?: (message: string) => AwsJsonError;
  /** The `__type` of an unexpected failure (500), e.g. `com.amazon.coral.service#InternalFailure`. */
  internalErrorType: string;
  /** Run after the server has closed (SQS writes its messages to its file). */
  onClose?: () => void;
}

export interface AwsJsonServer {
  endpoint: string;
  server: Server;
  /** Ends every open call (long polls answer at once), stops listening, closes every connection. */
  close(): Promise<void>;
}

const CORAL = 'com.amazon.coral.service';

/**
 * A request whose body does not fit the operation's input shape (not JSON, not an object, a
 * member of the wrong JSON type): refused as AWS's front end refuses it, before the operation.
 */
export const serializationError = (message: string) => new AwsJsonError(`${CORAL}#SerializationException`, message);

/** Checks of an input member's JSON type (null is absent, as in the JSON protocols); SerializationException if wrong. */
export const members = {
  /** A string, or a blob (base64 text). */
  string(value: unknown, member: string): string | undefined {
    if (value == null) return undefined;
    if (typeof value !== 'string') throw serializationError(`${member} must be a string.`);
    return value;
  },
  /** A list of strings. */
  strings(value: unknown, member: string): string[] | undefined {
    if (value == null) return undefined;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      throw serializationError(`${member} must be a list of strings.`);
    }
    return value;
  },
  /** A structure or a map: a JSON object. */
  object<T extends object>(value: unknown, member: string): T | undefined {
    if (value == null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) throw serializationError(`${member} must be an object.`);
    return value as T;
  },
  /** A list of structures. */
  objects<T extends object>(value: unknown, member: string): T[] | undefined {
    if (value == null) return undefined;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))) {
      throw serializationError(`${member} must be a list of objects.`);
    }
    return value as T[];
  },
};

/** Content types are compared without their parameters (`; charset=utf-8`), case-insensitively. */
const mediaType = (header: string | undefined) => (header ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * The body; `'too large'` once more than `limit` bytes have come (the rest is not kept); `'gone'`
 * if the request ends before its body (the caller went away, or the server is closing).
 */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | 'too large' | 'gone'> {
  return new Promise((resolve) => {
    if (Number(request.headers['content-length'] ?? 0) > limit) return resolve('too large');
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        request.off('data', onData);
        return resolve('too large');
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', () => resolve('gone'));
    request.on('close', () => resolve('gone'));
  });
}

/** Serves `service` over HTTP on `port` (0: a free one) at `host`. */
export async function startAwsJsonServer(service: AwsJsonService, port: number, host = '127.0.0.1'): Promise<AwsJsonServer> {
  /** Each call being answered, to end at close: its abort, its request and its response. */
  const open: OpenCalls = new Map();
  const server = createServer(async (request, response) => {
    const abort = new AbortController();
    open.set(abort, { request, response });
    response.on('close', () => {
      abort.abort();
      open.delete(abort);
    });
    try {
      await answer(service, request, response, abort.signal);
    } catch (error) {
      if (error instanceof AwsJsonError) return answerError(service, response, error);
      console.error(`${service.name} failed`, error);
      answerError(service, response, new AwsJsonError(service.internalErrorType, 'internal error', 500));
    }
  });
  const bound = await listen(server, port, host);
  return {
    endpoint: `http://${host}:${bound}`,
    server,
    close: async () => {
      endOpenCalls(open);
      await new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      service.onClose?.();
    },
  };
}

type OpenCalls = Map<AbortController, { request: IncomingMessage; response: ServerResponse }>;

const contentTypeOf = (service: AwsJsonService) => `application/x-amz-json-${service.jsonVersion}`;

/** One call: its request checked and read, its operation run and its output written (an AwsJsonError thrown otherwise). */
async function answer(service: AwsJsonService, request: IncomingMessage, response: ServerResponse, signal: AbortSignal) {
  const contentType = contentTypeOf(service);
  if (request.method !== 'POST' || mediaType(request.headers['content-type']) !== contentType) {
    // Not a call of this protocol at all: AWS answers in XML, whatever was sent.
    request.resume();
    response.writeHead(404, { 'x-amzn-requestid': randomUUID() });
    return response.end('<UnknownOperationException/>\n');
  }
  const body = await readBody(request, service.maxBodyBytes);
  if (body === 'gone') return response.destroy(); // no one to answer
  if (body === 'too large') {
    request.resume(); // drain what is still coming, unread, so that the client reads the answer
    response.writeHead(413, { 'x-amzn-requestid': randomUUID(), connection: 'close' });
    return response.end();
  }
  const input = inputOf(body);
  const run = operationOf(service, String(request.headers['x-amz-target'] ?? ''));
  const output = await run(input, signal);
  response.writeHead(200, { 'content-type': contentType, 'x-amzn-requestid': randomUUID() });
  response.end(JSON.stringify(output ?? {}));
}

/** The input document: the body's JSON object (an empty body is `{}`), else SerializationException. */
function inputOf(body: Buffer): Record<string, unknown> {
  let input: unknown;
  try {
    input = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
  } catch {
    throw serializationError('The request body is not JSON.');
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw serializationError('The request body is not a JSON object.');
  }
  return input as Record<string, unknown>;
}

/**
 * The operation `target` names: the stand-in's own, else its `unimplemented` error for one the
 * real service has, else UnknownOperationException.
 */
function operationOf(service: AwsJsonService, target: string): AwsJsonOperation {
  const ours = target.startsWith(`${service.targetPrefix}.`);
  const operation = ours ? target.slice(service.targetPrefix.length + 1) : '';
  const run = ours && Object.hasOwn(service.operations, operation) ? service.operations[operation] : undefined;
  if (run) return run;
  const known =
    operation && service.sdk && `${operation}Command` in service.sdk
      ? service.unimplemented?.(`The ${service.name} stand-in does not implement ${target}.`)
      : undefined;
  throw (
    known ??
    new AwsJsonError(
      `${CORAL}#UnknownOperationException`,
      target ? `${service.name} has no operation ${target}.` : 'The request has no x-amz-target.',
    )
  );
}

function answerError(service: AwsJsonService, response: ServerResponse, error: AwsJsonError) {
  const headers: Record<string, string> = { 'content-type': contentTypeOf(service), 'x-amzn-requestid': randomUUID() };
  if (service.queryCompatible) {
    const code = error.queryCode ?? error.type.split('#').at(-1)!;
    headers['x-amzn-query-error'] = `${code};${error.status >= 500 ? 'Receiver' : 'Sender'}`;
  }
  response.writeHead(error.status, headers);
  response.end(JSON.stringify({ __type: error.type, message: error.message }));
}

/** Ends every call still open, so that closing the server need not wait for any. */
function endOpenCalls(open: OpenCalls) {
  for (const [abort, { request, response }] of open) {
    // Its answer (a long poll's, at once) is the connection's last, so the close need not wait for it to idle.
    if (!response.headersSent) response.shouldKeepAlive = false;
    abort.abort();
    // A body still coming (a client that stopped sending) would hold the close forever.
    if (!request.complete) request.destroy();
  }
}
