import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Caller } from '../auth/verifier';
import type { BoardScope } from '../data/access';
import type { Conditions } from './conditional';
import type { RateLimitOutcome } from './rate-limit';

/** What the middlewares learn about a request, kept on the Lambda context for the handler. */
export interface RouteState {
  caller?: Caller;
  params: Record<string, unknown>;
  body: unknown;
  scope?: BoardScope;
  preloaded?: unknown;
  /** The Idempotency-Key of a row that honours one (lib/http/idempotency.ts), when sent. */
  idempotencyKey?: string;
  /** If-Match and If-None-Match as parsed, on a row that honours them (`conditional`). */
  conditions?: Conditions;
  startedAt: number;
  /**
   * The request's rate-limit count once started (lib/http/rate-limit.ts); it never rejects, and
   * resolves undefined when the request goes uncounted.
   */
  rateLimit?: Promise<RateLimitOutcome | undefined>;
  /** A personal access token's use being recorded beside the request (never rejects); awaited before the answer. */
  personalTokenUse?: Promise<void>;
}

export type RouteContext = Context & { route: RouteState };
export type RouteMiddleware = MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, RouteContext>;

export const requestIdOf = (event: APIGatewayProxyEventV2) => event.requestContext?.requestId;

/** Marks an answer replayed for a retried Idempotency-Key (lib/http/idempotency.ts). */
export const REPLAYED_HEADER = 'idempotent-replayed';
