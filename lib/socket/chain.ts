import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { GenericSchema, InferOutput } from 'valibot';
import { checkValue } from '../contract/validation';
import { asDomainError } from '../data/sdk-errors';
import { BadRequest, type DomainError, Unavailable } from '../domain/errors';
import type { ControlFrame, SocketErrorCode } from '../domain/events';
import { remainingMsOf, type SocketRouteRow } from '../rows/row';
import { invocationChain } from '../runtime/invocation';
import { logger } from '../runtime/logger';

/** An API Gateway WebSocket event (Lambda proxy integration), as much of it as the service reads. */
export interface SocketEvent {
  requestContext: {
    routeKey: string;
    eventType: 'CONNECT' | 'MESSAGE' | 'DISCONNECT';
    connectionId: string;
    domainName?: string;
    stage?: string;
    requestId?: string;
    connectedAt?: number;
    disconnectStatusCode?: number;
  };
  body?: string;
  isBase64Encoded?: boolean;
  queryStringParameters?: Record<string, string | undefined>;
  headers?: Record<string, string | undefined>;
}

export interface SocketResult {
  statusCode: number;
  body?: string;
}

/** The message a row takes, as its schema outputs it; nothing for lifecycle rows. */
type MessageOf<R extends SocketRouteRow> = R extends { body: () => infer S extends GenericSchema }
  ? InferOutput<S>
  : Record<string, never>;

interface SocketInput<R extends SocketRouteRow = SocketRouteRow> {
  connectionId: string;
  /** The message, validated against the row's schema (action rows). */
  body: MessageOf<R>;
  event: SocketEvent;
}

/** A handler's answer: a frame for the socket (action rows), or nothing (lifecycle rows). */
export type SocketHandler<R extends SocketRouteRow = SocketRouteRow> = (
  input: SocketInput<R>,
) => Promise<ControlFrame | undefined>;

/**
 * Every error kind's code in an `error` frame, so that a new kind needs a decision here. The
 * contract has five codes; kinds no socket route raises (HTTP-only rules) are `internal`, since
 * meeting one on a socket would be a bug of ours.
 */
const ERROR_CODES: Record<DomainError['kind'], SocketErrorCode> = {
  bad_request: 'bad_request',
  forbidden: 'forbidden',
  insufficient_scope: 'internal',
  limit_reached: 'limit',
  resync_required: 'internal',
  unavailable: 'unavailable',
  unauthorized: 'internal',
  not_found: 'internal',
  method_not_allowed: 'internal',
  conflict: 'internal',
  payload_too_large: 'internal',
  unsupported_media_type: 'internal',
  response_too_large: 'internal',
  idempotency_key_reused: 'internal',
  idempotency_key_in_use: 'internal',
  invalid_code: 'internal',
  wrong_password: 'internal',
  precondition_failed: 'internal',
  not_a_member: 'internal',
  archived: 'internal',
};
/** `$connect` refuses the handshake with the HTTP status of the error. */
const CONNECT_STATUS: Partial<Record<DomainError['kind'], number>> = { unauthorized: 401, bad_request: 400, unavailable: 503 };

interface SocketState {
  startedAt: number;
  /** The message, once validated (action rows). */
  message: Record<string, unknown>;
}
type SocketContext = Context & { socket: SocketState };
type SocketMiddleware = MiddlewareObj<SocketEvent, SocketResult, Error, SocketContext>;

/**
 * The one chain every WebSocket route shares, as lib/http/chain.ts is for HTTP: a log line per
 * message, errors turned into the contract's `error` frames (or, on `$connect`, a refused
 * handshake), the message parsed and validated against the row's schema, and around all of it
 * the shared trigger steps (lib/runtime/invocation.ts: cold start, the request deadline). A handler takes validated input and returns the
 * frame to answer with. Each handler passes its own row (lib/rows/socket.ts), so that no other
 * row is in its bundle.
 */
export function socketRoute<R extends SocketRouteRow>(row: R, handler: SocketHandler<R>) {
  const { id } = row;
  const chain = middy<SocketEvent, SocketResult, Error, SocketContext>({ timeoutEarlyInMillis: 0 })
    .use(socketLog(row))
    .use(socketErrors(row))
    .use(parseSocketMessage(row))
    .handler(async (event, context) => {
      const frame = await handler({
        connectionId: event.requestContext.connectionId,
        body: context.socket.message as MessageOf<R>,
        event,
      });
      return frame ? { statusCode: 200, body: JSON.stringify(frame) } : { statusCode: 200 };
    }) as unknown as (event: SocketEvent, context: Context) => Promise<SocketResult>;
  return invocationChain(row, remainingMsOf, (event: SocketEvent, context: Context) => ({
    work: () => chain(event, context),
    onDeadline: (): SocketResult => {
      logger.error('socket deadline reached', { route: id, connectionId: event.requestContext.connectionId });
      if (row.routeKey === '$connect') return { statusCode: 503 };
      return {
        statusCode: 200,
        body: JSON.stringify(errorFrame(row, new Unavailable('The request took too long; retry shortly.'), {})),
      };
    },
  }));
}

/** One line per message: successes at DEBUG, refusals at INFO, failures at ERROR with the error. */
function socketLog({ id }: SocketRouteRow): SocketMiddleware {
  const fields = (event: SocketEvent, context: SocketContext) => ({
    route: id,
    connectionId: event.requestContext.connectionId,
    requestId: event.requestContext.requestId,
    durationMs: Math.round((performance.now() - context.socket.startedAt) * 100) / 100,
  });
  return {
    before: ({ context }) => {
      context.socket = { startedAt: performance.now(), message: {} };
    },
    after: ({ event, context }) => logger.debug('socket message', fields(event, context)),
    onError: ({ event, context, error }) => {
      const known = asDomainError(error);
      if (known && known.kind !== 'unavailable')
        logger.info('socket message refused', { ...fields(event, context), detail: known.detail });
      else logger.error('socket message failed', { ...fields(event, context), error });
    },
  };
}

/** Any error as the contract's `error` frame; on `$connect`, as the status that refuses the handshake. */
function socketErrors(row: SocketRouteRow): SocketMiddleware {
  return {
    onError: (request) => {
      const known = asDomainError(request.error);
      request.response =
        row.routeKey === '$connect'
          ? { statusCode: (known && CONNECT_STATUS[known.kind]) ?? 500 }
          : { statusCode: 200, body: JSON.stringify(errorFrame(row, known, request.context.socket?.message ?? {})) };
    },
  };
}

/** The message as JSON, checked against the row's schema (action rows): a bad_request error otherwise. */
function parseSocketMessage(row: SocketRouteRow): SocketMiddleware {
  return {
    before: ({ event, context }) => {
      if (row.body) context.socket.message = parseMessage(row, event);
    },
  };
}

function parseMessage(row: SocketRouteRow, event: SocketEvent): Record<string, unknown> {
  const text = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadRequest('A message must be a JSON object with an "action".');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new BadRequest('A message must be a JSON object with an "action".');
  }
  const checked = checkValue(row.body!(), parsed);
  if ('issues' in checked) {
    throw new BadRequest(`Invalid message: ${checked.issues.map(({ path, message }) => `${path} ${message}`).join('; ')}`);
  }
  return checked.output as Record<string, unknown>;
}

function errorFrame(row: SocketRouteRow, known: DomainError | undefined, message: Record<string, unknown>): ControlFrame {
  const code = known ? ERROR_CODES[known.kind] : 'internal';
  const boardId = typeof message.board_id === 'string' ? message.board_id : undefined;
  return {
    type: 'error',
    code,
    detail: known?.detail ?? 'Something went wrong on our side; retry later.',
    ...(row.routeKey.startsWith('$') ? {} : { ref: row.routeKey }),
    ...(boardId ? { board_id: boardId } : {}),
  };
}
