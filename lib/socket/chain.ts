import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { safeParse } from 'valibot';
import { BadRequest, type DomainError } from '../domain/errors';
import type { ControlFrame, SocketErrorCode } from '../domain/events';
import { expectation } from '../http/parse';
import { classify } from '../http/problem';
import { type SocketRouteId, type SocketRouteRow, socketRoutes } from '../routes';
import { ENV, requireEnv } from '../runtime/config';
import { raceDeadline } from '../runtime/deadline';
import { logger } from '../runtime/logger';
import { countColdStart } from '../runtime/metrics';

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

export interface SocketInput {
  connectionId: string;
  /** The message, validated against the row's schema (action rows). */
  body: Record<string, unknown>;
  event: SocketEvent;
}

/** A handler's answer: a frame for the socket (action rows), or nothing (lifecycle rows). */
export type SocketHandler = (input: SocketInput) => Promise<ControlFrame | undefined>;

const ERROR_CODES: Partial<Record<DomainError['kind'], SocketErrorCode>> = {
  bad_request: 'bad_request',
  forbidden: 'forbidden',
  conflict: 'limit',
  unavailable: 'unavailable',
};
/** `$connect` refuses the handshake with the HTTP status of the error. */
const CONNECT_STATUS: Partial<Record<DomainError['kind'], number>> = { unauthorized: 401, bad_request: 400, unavailable: 503 };

/**
 * The one chain every WebSocket route shares, as lib/http/chain.ts is for HTTP: cold-start count,
 * a log line per message, the message parsed and validated against the row's schema, errors
 * turned into the contract's `error` frames (or, on `$connect`, a refused handshake), and the
 * request deadline. A handler only takes validated input and returns the frame to answer with.
 */
export function socketRoute(id: SocketRouteId, handler: SocketHandler) {
  const row: SocketRouteRow = socketRoutes[id];
  if (row.table.length > 0) requireEnv(ENV.tableName);
  const chain = middy<SocketEvent, SocketResult, Error, Context>().handler(async (event) => {
    const startedAt = performance.now();
    const { connectionId, requestId } = event.requestContext;
    let message: Record<string, unknown> = {};
    try {
      if (row.body) message = parseMessage(row, event);
      const frame = await handler({ connectionId, body: message, event });
      logger.debug('socket message', { route: id, connectionId, requestId, durationMs: elapsed(startedAt) });
      return frame ? { statusCode: 200, body: JSON.stringify(frame) } : { statusCode: 200 };
    } catch (error) {
      const known = classify(error);
      const fields = { route: id, connectionId, requestId, durationMs: elapsed(startedAt) };
      if (known && known.kind !== 'unavailable') logger.info('socket message refused', { ...fields, detail: known.detail });
      else logger.error('socket message failed', { ...fields, error });
      if (row.routeKey === '$connect') return { statusCode: (known && CONNECT_STATUS[known.kind]) ?? 500 };
      return { statusCode: 200, body: JSON.stringify(errorFrame(row, known, message)) };
    }
  });
  return (event: SocketEvent, context: Context): Promise<SocketResult> => {
    countColdStart(row.entry);
    const remaining = context?.getRemainingTimeInMillis?.() ?? (row.timeoutSeconds ?? 10) * 1000;
    return raceDeadline(
      remaining,
      () => chain(event, context),
      () => {
        logger.error('socket deadline reached', { route: id, connectionId: event.requestContext.connectionId });
        if (row.routeKey === '$connect') return { statusCode: 503 };
        return { statusCode: 200, body: JSON.stringify(errorFrame(row, classify(new Error('deadline')), {})) };
      },
    );
  };
}

const elapsed = (startedAt: number) => Math.round((performance.now() - startedAt) * 100) / 100;

/** The message as JSON, checked against the row's schema: a bad_request error otherwise. */
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
  const result = safeParse(row.body!(), parsed, { message: expectation });
  if (!result.success) {
    const issues = result.issues.map(
      (issue) => `${(issue.path ?? []).map((item) => String(item.key)).join('.')} ${issue.message}`,
    );
    throw new BadRequest(`Invalid message: ${issues.join('; ')}`);
  }
  return result.output as Record<string, unknown>;
}

function errorFrame(row: SocketRouteRow, known: DomainError | undefined, message: Record<string, unknown>): ControlFrame {
  const code = (known && ERROR_CODES[known.kind]) ?? 'internal';
  const boardId = typeof message.board_id === 'string' ? message.board_id : undefined;
  return {
    type: 'error',
    code,
    detail: known?.detail ?? 'Something went wrong on our side; retry later.',
    ...(row.routeKey.startsWith('$') ? {} : { ref: row.routeKey }),
    ...(boardId ? { board_id: boardId } : {}),
  };
}
