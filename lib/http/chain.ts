import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as v from 'valibot';
import type { Caller } from '../auth/verifier';
import type { BoardScope, ScopeVia, Via } from '../data/access';
import { ResponseTooLarge, Unavailable } from '../domain/errors';
import { type RouteRow, remainingMsOf } from '../rows/row';
import { overLambdaResponseLimit } from '../runtime/aws-limits';
import { ENV, requireEnv } from '../runtime/config';
import { raceDeadline } from '../runtime/deadline';
import { logger } from '../runtime/logger';
import { COMPRESS_MIN_BYTES, compress, type Encoding, negotiateEncoding } from './compress';
import type { Conditions } from './conditional';
import { routeMetrics } from './metrics';
import { parseRequest } from './parse';
import { problemResponse } from './problem';
import type { RateLimitSteps } from './rate-limit';
import { problemErrors, requestLog } from './request-log';
import { type RouteContext, type RouteMiddleware, type RouteState, requestIdOf } from './types';

/** What a handler gets, typed from its own row (a row of lib/rows): its body, params, caller and scope. */
export type BodyOf<R extends RouteRow> = R extends { body: () => infer S extends v.GenericSchema } ? v.InferOutput<S> : undefined;
type PathParamsOf<R extends RouteRow> = R extends { params: () => infer S extends v.GenericSchema }
  ? v.InferOutput<S>
  : Record<string, never>;
/** Path and query parameters together (lib/http/parse.ts hands them over as one object). */
type ParamsOf<R extends RouteRow> = PathParamsOf<R> &
  (R extends { query: () => infer Q extends v.GenericSchema } ? v.InferOutput<Q> : unknown);
type CallerOf<R extends RouteRow> = R['access'] extends { scope: 'public' } ? undefined : Caller;
/** A board route's scope names the item its row reaches the board by (`via`), already read and typed. */
type ScopeOf<R extends RouteRow> = R['access'] extends { scope: 'board'; via: infer V extends Via }
  ? ScopeVia<V>
  : R['access'] extends { scope: 'board' }
    ? BoardScope
    : undefined;

export interface RouteInput<R extends RouteRow, P> {
  caller: CallerOf<R>;
  params: ParamsOf<R>;
  body: BodyOf<R>;
  /** The addressed board, checked for membership (board routes only). */
  scope: ScopeOf<R>;
  preloaded: P;
  /** If-Match and If-None-Match as parsed (rows that honour them; none sent: empty). */
  conditions: Conditions;
  event: APIGatewayProxyEventV2;
  /**
   * A retry of a request already done under its Idempotency-Key, on a row whose answer is made
   * again rather than kept (registration): create nothing, answer as the first time.
   */
  replay: boolean;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  /** Sent as these bytes with this content type instead of `body` as JSON (a page, a script). */
  raw?: { bytes: Buffer; contentType: string };
  headers?: Record<string, string>;
  /**
   * The answer's entity tag from the JSON answered (a tag that hashes the bytes sent: the board
   * tree), so that the body is serialised once. A tag known beforehand goes in `headers`.
   */
  etagOf?: (json: string) => string;
  /** The problem to answer when the body is over what a Lambda answer may carry (`compressed`: it already was). */
  oversize?: (compressed: boolean) => Error;
}

/**
 * How a row's caller is established and what it may touch, and (rows that create something)
 * how the handler runs once per Idempotency-Key (lib/http/idempotency.ts); public rows have none.
 */
export interface AccessSteps {
  authenticate?: RouteMiddleware;
  authorize?: RouteMiddleware;
  once?: (row: RouteRow, state: RouteState, work: (replay: boolean) => Promise<RouteResult>) => Promise<RouteResult>;
  /**
   * The row's rate limit (lib/http/rate-limit.ts), from `route()` and `credentialRoute()`: the
   * counter lives in the table, so the uncounted public rows' bundles (health, the documents, the
   * catch-all) stay without the table client.
   */
  limit?: RateLimitSteps;
}

/**
 * The one middy chain every handler goes through: request log, metrics, rate limits
 * (lib/http/rate-limit.ts: the fields on every counted answer, 429 over the quota), problem+json
 * errors, authentication, input parsing and validation, authorization, then the handler (once per
 * Idempotency-Key where the row honours one), whose result is serialised here. A handler never catches, maps a status or stringifies. The access steps are
 * passed in by `route()` (lib/http/route.ts) so that a public function's bundle holds neither the
 * token verifier nor the table client (lib/http/public-route.ts).
 */
export function buildRoute<R extends RouteRow, P>(
  row: R,
  handler: (input: RouteInput<R, P>) => Promise<RouteResult>,
  access: AccessSteps,
) {
  const { id } = row;
  // Routes that use the table check its configuration at cold start, not at their first query.
  if (row.table.length > 0 || row.index?.length) requireEnv(ENV.tableName);
  // Fair use: counted once per request, beside the first read; refused before anything is done.
  const { limit } = access;
  // middy's own early timeout covers only the handler body; the deadline below covers the chain.
  const chain = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, RouteContext>({ timeoutEarlyInMillis: 0 })
    .use(requestLog(id))
    .use(routeMetrics(row))
    .use(limit ? [limit.answers] : [])
    .use(problemErrors())
    .use(limit?.countAddress ? [limit.countAddress] : [])
    .use(access.authenticate ? [access.authenticate] : [])
    .use(limit?.countUser ? [limit.countUser] : [])
    .use(parseRequest(row))
    .use(access.authorize ? [access.authorize] : [])
    .use(limit?.gate ? [limit.gate] : [])
    .handler(async (event, context) => {
      const state = context.route;
      const work = (replay: boolean) =>
        handler({
          caller: state.caller as CallerOf<R>,
          params: state.params as ParamsOf<R>,
          body: state.body as BodyOf<R>,
          scope: state.scope as ScopeOf<R>,
          preloaded: state.preloaded as P,
          conditions: state.conditions ?? {},
          event,
          replay,
        });
      const run = () => (access.once ? access.once(row, state, work) : work(false));
      const result = await (limit?.beside ? limit.beside(state, run) : run());
      return toResponse(result, event);
    }) as unknown as (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
  return withDeadline(id, row, chain);
}

/**
 * Answers 503 (Retry-After) shortly before the function would time out, whatever step the request
 * is in, and aborts the request's signal so that no SDK retry of it starts afterwards.
 */
function withDeadline(
  id: string,
  row: RouteRow,
  chain: (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>,
) {
  return async (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> => {
    const remaining = remainingMsOf(context, row);
    const answer = await raceDeadline(
      remaining,
      () => chain(event, context),
      () => {
        logger.error('request deadline reached', { route: id, requestId: requestIdOf(event), remainingMs: remaining });
        return problemResponse(new Unavailable('The request took too long; retry shortly.'), requestIdOf(event));
      },
    );
    return finished(answer);
  };
}

/**
 * Headers every answer of every function carries, whatever made it: the handler's result, a
 * problem (refused before the handler too: 400, 413, 415, 401), the 429, the deadline's 503.
 * `nosniff`: a browser takes the content type as sent and never guesses another (a problem body
 * or a board title read as HTML or script). Set here, the one place all answers leave through, so
 * that no route, error path or new step can forget it.
 */
export const ANSWER_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' };

const finished = (answer: APIGatewayProxyStructuredResultV2): APIGatewayProxyStructuredResultV2 => ({
  ...answer,
  headers: { ...answer.headers, ...ANSWER_HEADERS },
});

/**
 * The handler's result as the HTTP API's answer: JSON (or the result's `raw` bytes), compressed
 * when the client accepts it and the body is worth it (`Vary: Accept-Encoding` either way, for
 * caches), and never larger than a Lambda answer may be: past 6 MB the result's own `oversize`
 * problem (or a generic one) is the answer, a clear 4xx instead of the gateway's 500.
 */
function toResponse(
  { status, body, raw, headers: own = {}, etagOf, oversize }: RouteResult,
  event: APIGatewayProxyEventV2,
): APIGatewayProxyStructuredResultV2 {
  if (body === undefined && raw === undefined) return { statusCode: status, headers: own };
  // JSON stays a string unless it is compressed: encoding it to bytes and back costs 30 µs a board.
  const text = raw ? undefined : JSON.stringify(body);
  const headers = etagOf && text !== undefined ? { ...own, etag: etagOf(text) } : own;
  const size = raw ? raw.bytes.length : Buffer.byteLength(text!);
  const contentType = raw?.contentType ?? 'application/json';
  const encoding = size >= COMPRESS_MIN_BYTES ? negotiateEncoding(event.headers?.['accept-encoding']) : undefined;
  const answer: APIGatewayProxyStructuredResultV2 = encoding
    ? {
        statusCode: status,
        headers: { 'content-type': contentType, 'content-encoding': encoding, vary: 'accept-encoding', ...headers },
        body: (raw ? compressedOnce(raw.bytes, encoding) : compress(Buffer.from(text!, 'utf8'), encoding)).toString('base64'),
        isBase64Encoded: true,
      }
    : {
        statusCode: status,
        headers: { 'content-type': contentType, vary: 'accept-encoding', ...headers },
        // Raw bytes need not be UTF-8 text (an image): base64, as API Gateway expects binary.
        ...(raw ? { body: raw.bytes.toString('base64'), isBase64Encoded: true } : { body: text }),
      };
  // Lambda counts the JSON the function returns, in which the body is a string again (its quotes
  // and backslashes escaped once more), headers too: ANSWER_HEADERS are counted as they will be sent.
  if (overLambdaResponseLimit(finished(answer))) {
    throw (
      oversize?.(encoding !== undefined) ??
      new ResponseTooLarge('The answer is larger than the service can send in one response.')
    );
  }
  return answer;
}

/**
 * Raw bodies are files read once per container (the API reference's script is 1.7 MB, about 50 ms
 * of brotli): each is compressed once per encoding and kept as long as its bytes are.
 */
const compressedRaw = new WeakMap<Buffer, Partial<Record<Encoding, Buffer>>>();
function compressedOnce(bytes: Buffer, encoding: Encoding): Buffer {
  const forms = compressedRaw.get(bytes) ?? {};
  compressedRaw.set(bytes, forms);
  forms[encoding] ??= compress(bytes, encoding);
  return forms[encoding];
}
