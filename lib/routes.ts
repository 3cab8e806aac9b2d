import * as asyncapi from './rows/asyncapi';
import * as auth from './rows/auth';
import * as boards from './rows/boards';
import * as cards from './rows/cards';
import * as children from './rows/children';
import * as columns from './rows/columns';
import * as comments from './rows/comments';
import * as docs from './rows/docs';
import * as events from './rows/events';
import * as fallback from './rows/fallback';
import * as health from './rows/health';
import * as labels from './rows/labels';
import * as members from './rows/members';
import * as openapi from './rows/openapi';
import * as realtime from './rows/realtime';
import {
  isCatchAll,
  matchPath,
  type PoolTriggerRow,
  type QueueConsumerRow,
  type RouteRow,
  type ScheduleRow,
  type SocketRouteRow,
  type StreamConsumerRow,
} from './rows/row';
import * as socket from './rows/socket';
import * as sockets from './rows/sockets';
import type { RouteText } from './rows/text';
import * as webhooks from './rows/webhooks';

export {
  type FunctionRow,
  functionTimeoutSeconds,
  isCatchAll,
  type PoolTriggerRow,
  type QueueConsumerRow,
  type RouteRow,
  routeKeyOf,
  type ScheduleRow,
  SOCKET_STAGE,
  type SocketRouteRow,
  STREAM_FILTERS_MAX,
  STREAM_READERS_MAX,
  type StreamConsumerRow,
} from './rows/row';

/**
 * The modules of lib/rows, each named after the first segment of its rows' ids (`cards.move` is
 * in lib/rows/cards.ts, its handler under functions/cards/). A row is an export of one of them,
 * and its kind is its shape (a `method`: an HTTP route; a `routeKey`: a WebSocket route;
 * `filters`: a stream reader; ...); a route's OpenAPI text is the export beside it that points at
 * it (lib/rows/text.ts). So a row added to a module is in its table with no line of this file;
 * only a new module is listed.
 */
const modules = [
  asyncapi,
  auth,
  boards,
  cards,
  children,
  columns,
  comments,
  docs,
  events,
  fallback,
  health,
  labels,
  members,
  openapi,
  realtime,
  socket,
  sockets,
  webhooks,
];

type ValuesOf<T> = T extends unknown ? T[keyof T] : never;
/** Every export of the row modules: each row, and each route's text. */
type Export = ValuesOf<(typeof modules)[number]>;
type Rows<Shape> = Extract<Export, Shape>;
/** A table of rows, keyed by id: each key typed as its row. */
type TableOf<Row extends { id: string }> = { [Id in Row['id']]: Extract<Row, { id: Id }> };

const exported: unknown[] = modules.flatMap((module) => Object.values(module));
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);

/** The rows of one shape, by id, in the order `compare` gives (a module's namespace lists its exports by name). */
function tableOf<Row extends { id: string }>(shape: string, compare: (a: Row, b: Row) => number = byId): TableOf<Row> {
  const rows = exported.filter((value): value is Row => typeof value === 'object' && value !== null && shape in value);
  const table = Object.fromEntries(rows.sort(compare).map((row) => [row.id, row]));
  if (Object.keys(table).length !== rows.length) throw new Error(`two rows with a ${shape} have the same id`);
  return table as TableOf<Row>;
}

const METHOD_ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'ANY'];
/**
 * HTTP rows by path, then method (GET, POST, PUT, PATCH, DELETE), the catch-all last: the order
 * of the OpenAPI document's paths and of lib/rows/served.ts. No two templates match one path, so
 * the order decides nothing else.
 */
const byPath = (a: RouteRow, b: RouteRow) =>
  isCatchAll(a) !== isCatchAll(b)
    ? Number(isCatchAll(a)) - Number(isCatchAll(b))
    : a.path !== b.path
      ? a.path < b.path
        ? -1
        : 1
      : METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method);

/**
 * THE route table, assembled from the rows of lib/rows, by id. CDK makes one HTTP API route and
 * one function per row, the local server serves the same rows, the documents describe them and
 * the tests walk them. No function imports this module: each handler imports its own row
 * (`route(boardsGet, …)`), so that adding a row changes no other function's bundle
 * (test/infra/bundle-growth.test.ts); the catch-all knows the served paths from
 * lib/rows/served.ts, which `npm run openapi` writes from this table.
 */
export const routes = tableOf<Rows<{ method: string }>>('method', byPath) satisfies Record<string, RouteRow>;

/** The WebSocket API's routes (docs/asyncapi.yaml), by id. */
export const socketRoutes = tableOf<Rows<{ routeKey: string }>>('routeKey') satisfies Record<string, SocketRouteRow>;

/**
 * The table stream's readers, by id: two at most (STREAM_READERS_MAX; docs/realtime.md "The
 * readers"): the change reader (sockets and webhooks) and the cleanup reader (deletions).
 */
export const streamConsumers = tableOf<Rows<{ filters: readonly object[] }>>('filters') satisfies Record<
  string,
  StreamConsumerRow
>;

/** The webhook deliveries queue's consumers, by id (lib/rows/row.ts QueueConsumerRow). */
export const queueConsumers = tableOf<Rows<{ maxReceiveCount: number }>>('maxReceiveCount') satisfies Record<
  string,
  QueueConsumerRow
>;

/** The scheduled functions, by id. */
export const schedules = tableOf<Rows<{ everyMinutes: number }>>('everyMinutes') satisfies Record<string, ScheduleRow>;

/** The functions the user pool invokes (Cognito Lambda triggers), by id. */
export const poolTriggers = tableOf<Rows<{ trigger: string }>>('trigger') satisfies Record<string, PoolTriggerRow>;

export type SocketRouteId = keyof typeof socketRoutes;
export type StreamConsumerId = keyof typeof streamConsumers;
export type ScheduleId = keyof typeof schedules;
export type QueueConsumerId = keyof typeof queueConsumers;
export type PoolTriggerId = keyof typeof poolTriggers;

type Routes = typeof routes;
export type RouteId = keyof Routes;
export const routeIds = Object.keys(routes) as RouteId[];

/** The routes the OpenAPI document describes: all but the catch-all. */
export type DocumentedRouteId = Exclude<RouteId, 'fallback'>;
type Described = Rows<{ of: RouteRow }>['of']['id'];

/**
 * Each documented route's OpenAPI text (lib/rows/text.ts), by id. The annotation is the check
 * that every one has its text: a row without one names itself in the error.
 */
export const routeTexts: Record<DocumentedRouteId, RouteText> = Object.fromEntries(
  exported
    .filter((value): value is RouteText => typeof value === 'object' && value !== null && 'of' in value)
    .map((text) => [text.of.id, text]),
) as Record<Described, RouteText>;

/** The rows API Gateway routes by method and path: all but the catch-all. */
const servedRows = () => (Object.entries(routes) as [RouteId, RouteRow][]).filter(([, row]) => !isCatchAll(row));

/** The row serving `method` on a concrete path, with its path parameters; undefined: the catch-all's. */
export function routeFor(method: string, path: string): { id: RouteId; params: Record<string, string> } | undefined {
  for (const [id, row] of servedRows()) {
    if (row.method !== method) continue;
    const params = matchPath(row.path, path);
    if (params) return { id, params };
  }
  return undefined;
}

/** Every method a row serves, and the preflight's own: what CORS allows, on AWS and locally. */
export const corsMethods = () => [...new Set(servedRows().map(([, row]) => row.method)), 'OPTIONS' as const];

/** Each path the rows serve, with its methods in table order: what lib/rows/served.ts holds for the catch-all. */
export function servedMethodsByPath(): Record<string, string[]> {
  const byPath: Record<string, string[]> = {};
  for (const [, row] of servedRows()) {
    byPath[row.path] ??= [];
    byPath[row.path]!.push(row.method);
  }
  return byPath;
}
