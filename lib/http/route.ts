import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { z } from 'zod';
import type { Caller } from '../auth/verifier';
import type { BoardScope } from '../data/access';
import { type RouteId, type Routes, routes } from '../routes';
import { authenticate } from './authenticate';
import { type BoardAccessOptions, requireBoardMember } from './board-access';
import { routeMetrics } from './metrics';
import { parseRequest } from './parse';
import { problemErrors, requestLog } from './request-log';
import type { RouteContext } from './types';

type Row<Id extends RouteId> = Routes[Id];
type BodyOf<Id extends RouteId> = Row<Id> extends { body: infer S extends z.ZodType } ? z.output<S> : undefined;
type ParamsOf<Id extends RouteId> = Row<Id> extends { params: infer S extends z.ZodType } ? z.output<S> : Record<string, never>;
type CallerOf<Id extends RouteId> = Row<Id>['access'] extends { scope: 'public' } ? undefined : Caller;
type ScopeOf<Id extends RouteId> = Row<Id>['access'] extends { scope: 'board' } ? BoardScope : undefined;

export interface RouteInput<Id extends RouteId, P> {
  caller: CallerOf<Id>;
  params: ParamsOf<Id>;
  body: BodyOf<Id>;
  /** The addressed board, checked for membership (board routes only). */
  scope: ScopeOf<Id>;
  preloaded: P;
  event: APIGatewayProxyEventV2;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * The one middy chain every handler goes through: request log, problem+json errors, input
 * parsing and validation, authentication, board membership, then the handler, whose result is
 * serialised here. A handler never catches, maps a status or stringifies.
 */
export function route<Id extends RouteId, P = undefined>(
  id: Id,
  handler: (input: RouteInput<Id, P>) => Promise<RouteResult>,
  options: BoardAccessOptions<BodyOf<Id>, P> = {},
) {
  const row = routes[id];
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, RouteContext>()
    .use(requestLog(id))
    .use(routeMetrics(row))
    .use(problemErrors())
    .use(authenticate(row))
    .use(parseRequest(row))
    .use(requireBoardMember(row, options))
    .handler(async (event, context) => {
      const state = context.route;
      const result = await handler({
        caller: state.caller as CallerOf<Id>,
        params: state.params as ParamsOf<Id>,
        body: state.body as BodyOf<Id>,
        scope: state.scope as ScopeOf<Id>,
        preloaded: state.preloaded as P,
        event,
      });
      return toResponse(result);
    }) as unknown as (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
}

function toResponse({ status, body, headers = {} }: RouteResult): APIGatewayProxyStructuredResultV2 {
  if (body === undefined) return { statusCode: status, headers };
  return { statusCode: status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}
