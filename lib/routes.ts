import * as accounts from './rows/accounts';
import * as auth from './rows/auth';
import * as boards from './rows/boards';
import * as cards from './rows/cards';
import * as columns from './rows/columns';
import * as deliveries from './rows/deliveries';
import * as events from './rows/events';
import * as labels from './rows/labels';
import * as members from './rows/members';
import * as pool from './rows/pool';
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
import * as service from './rows/service';
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
 * THE route table, assembled from the rows of lib/rows (one export each, with its id as its key
 * here). CDK makes one HTTP API route and one function per row, the local server serves the same
 * rows, the documents describe them and the tests walk them. No function imports this module:
 * each handler imports its own row (`route(boardsGet, …)`), so that adding a row changes no other
 * function's bundle (test/infra/bundle-growth.test.ts); the catch-all knows the served paths from
 * lib/rows/served.ts, which `npm run openapi` writes from this table.
 */
export const routes = {
  health: service.health,
  openapi: service.openapi,
  asyncapi: service.asyncapi,
  docs: service.docs,
  'docs.file': service.docsFile,
  'auth.register': auth.authRegister,
  'auth.login': auth.authLogin,
  'auth.refresh': auth.authRefresh,
  'auth.logout': auth.authLogout,
  'auth.me': accounts.authMe,
  'auth.verify-email.request': accounts.authVerifyEmailRequest,
  'auth.verify-email': accounts.authVerifyEmail,
  'auth.password.forgot': accounts.authPasswordForgot,
  'auth.password.reset': accounts.authPasswordReset,
  'auth.password.change': accounts.authPasswordChange,
  'auth.account.delete': accounts.authAccountDelete,
  'boards.list': boards.boardsList,
  'boards.create': boards.boardsCreate,
  'boards.get': boards.boardsGet,
  'boards.rename': boards.boardsRename,
  'boards.delete': boards.boardsDelete,
  'boards.events': boards.boardsEvents,
  'columns.create': columns.columnsCreate,
  'cards.create': cards.cardsCreate,
  'cards.get': cards.cardsGet,
  'cards.update': cards.cardsUpdate,
  'cards.delete': cards.cardsDelete,
  'cards.move': cards.cardsMove,
  'columns.get': columns.columnsGet,
  'columns.rename': columns.columnsRename,
  'columns.delete': columns.columnsDelete,
  'columns.move': columns.columnsMove,
  'members.add': members.membersAdd,
  'members.list': members.membersList,
  'members.update': members.membersUpdate,
  'members.remove': members.membersRemove,
  'labels.create': labels.labelsCreate,
  'labels.list': labels.labelsList,
  'labels.update': labels.labelsUpdate,
  'labels.delete': labels.labelsDelete,
  'cards.labels.attach': cards.cardsLabelsAttach,
  'cards.labels.detach': cards.cardsLabelsDetach,
  'realtime.tickets': realtime.realtimeTickets,
  'webhooks.create': webhooks.webhooksCreate,
  'webhooks.list': webhooks.webhooksList,
  'webhooks.get': webhooks.webhooksGet,
  'webhooks.update': webhooks.webhooksUpdate,
  'webhooks.delete': webhooks.webhooksDelete,
  'webhooks.rotate-secret': webhooks.webhooksRotateSecret,
  'webhooks.ping': webhooks.webhooksPing,
  'webhooks.deliveries': webhooks.webhooksDeliveries,
  fallback: service.fallback,
} satisfies Record<string, RouteRow>;

/** The WebSocket API's routes (docs/asyncapi.yaml), by id. */
export const socketRoutes = {
  'socket.connect': realtime.socketConnect,
  'socket.disconnect': realtime.socketDisconnect,
  'socket.watch': realtime.socketWatch,
  'socket.unwatch': realtime.socketUnwatch,
  'socket.ping': realtime.socketPing,
  'socket.default': realtime.socketDefault,
} satisfies Record<string, SocketRouteRow>;

/**
 * The table stream's readers, by id: two at most (STREAM_READERS_MAX; docs/realtime.md "The
 * readers"): the change reader (sockets and webhooks) and the cleanup reader (deletions).
 */
export const streamConsumers = {
  'events.broadcast': events.eventsBroadcast,
  'children.collect': events.childrenCollect,
} satisfies Record<string, StreamConsumerRow>;

/** The webhook deliveries queue's consumers, by id (lib/rows/row.ts QueueConsumerRow). */
export const queueConsumers = {
  'webhooks.deliver': deliveries.webhooksDeliver,
} satisfies Record<string, QueueConsumerRow>;

/** The scheduled functions, by id. */
export const schedules = {
  'sockets.sweep': events.socketsSweep,
} satisfies Record<string, ScheduleRow>;

/** The functions the user pool invokes (Cognito Lambda triggers), by id. */
export const poolTriggers = {
  'auth.message': pool.authMessage,
} satisfies Record<string, PoolTriggerRow>;

export type SocketRouteId = keyof typeof socketRoutes;
export type StreamConsumerId = keyof typeof streamConsumers;
export type ScheduleId = keyof typeof schedules;
export type QueueConsumerId = keyof typeof queueConsumers;
export type PoolTriggerId = keyof typeof poolTriggers;

type Routes = typeof routes;
export type RouteId = keyof Routes;
export const routeIds = Object.keys(routes) as RouteId[];

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
