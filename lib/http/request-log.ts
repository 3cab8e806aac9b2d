import { beginInvocation, logger } from '../runtime/logger';
import { problemResponse } from './problem';
import { type RouteMiddleware, type RouteState, requestIdOf } from './types';

/**
 * One structured line per request (and the invocation's fields on every line: lib/runtime/logger.ts): successes at DEBUG (the HTTP API's access log already has a
 * line for every request with the same request id, status and latency, and writing this one cost
 * ~0.3 ms of each request's own time, measured by bench/log-level.ts; LOG_LEVEL=DEBUG turns them
 * on), 4xx at INFO, 5xx at ERROR with the error and its stack
 * (never in the body).
 */
export function requestLog(routeId: string): RouteMiddleware {
  const line = (statusCode: number | undefined, startedAt: number, requestId: string | undefined, state?: RouteState) => ({
    route: routeId,
    requestId,
    status: statusCode,
    durationMs: Math.round((performance.now() - startedAt) * 100) / 100,
    // A personal access token is named by its id, never its text (docs/tokens.md).
    ...(state?.caller?.personal ? { tokenId: state.caller.personal.tokenId } : {}),
  });
  return {
    before: (request) => {
      // First in the chain: every line of this invocation carries its request id from here on.
      beginInvocation(request.context);
      request.context.route = { params: {}, body: undefined, startedAt: performance.now() };
    },
    after: ({ event, context, response }) => {
      logger.debug('request', line(response?.statusCode, context.route.startedAt, requestIdOf(event), context.route));
    },
    onError: ({ event, context, response, error }) => {
      const status = response?.statusCode;
      const fields = line(status, context.route?.startedAt ?? performance.now(), requestIdOf(event), context.route);
      if (status !== undefined && status < 500) logger.info('request', fields);
      else logger.error('request failed', { ...fields, error });
    },
  };
}

/** Maps any error to problem+json; runs before requestLog's onError so the log sees the status. */
export function problemErrors(): RouteMiddleware {
  return {
    onError: (request) => {
      request.response = problemResponse(request.error, requestIdOf(request.event));
    },
  };
}
