import { boardAction } from '../contract/schemas';
import type { RouteRow, SocketRouteRow } from './row';
import type { RouteText } from './text';

/** Live board events: the HTTP row that hands out socket tickets, and the WebSocket API's routes. */

export const realtimeTickets = {
  id: 'realtime.tickets',
  method: 'POST',
  path: '/realtime/tickets',
  entry: 'functions/realtime/tickets.ts',
  group: 'live',
  logGroup: 'root',
  summary: 'Get a single-use ticket for a live board events socket (docs/asyncapi.yaml)',
  access: { scope: 'user' },
  // The ticket, its entry under the user and the account's check: one TransactWriteItems.
  rateLimitPlacement: 'fold',
  success: { status: 201, schema: 'ticketResponse' },
  // The ticket and its entry under the user, with a check that the account still exists; the rate
  // limiter's count rides in the same transaction (UpdateItem, added for every counted row) and is
  // read back beside it (BatchGetItem: docs/rate-limits.md, "Where it sits in a request").
  table: ['dynamodb:PutItem', 'dynamodb:ConditionCheckItem', 'dynamodb:BatchGetItem'],
  cognito: [],
  env: ['SOCKET_URL', 'TICKET_SECONDS'],
} satisfies RouteRow;

export const realtimeTicketsText = {
  of: realtimeTickets,
  tag: 'realtime',
  description:
    "A single-use ticket for one WebSocket connection to `url` (`url?ticket=<ticket>`), so that the token never goes in a URL. It expires after `expires_in` seconds and never outlives the caller's token.",
} satisfies RouteText;

export const socketConnect = {
  id: 'socket.connect',
  routeKey: '$connect',
  entry: 'functions/socket/connect.ts',
  group: 'live',
  logGroup: 'root',
  summary: 'Opens a socket for the holder of a valid ticket (401 otherwise)',
  // The connection, its entries, the ticket's entry under the user gone, the account still there.
  table: ['dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem'],
  cognito: [],
} satisfies SocketRouteRow;

export const socketDisconnect = {
  id: 'socket.disconnect',
  routeKey: '$disconnect',
  entry: 'functions/socket/disconnect.ts',
  group: 'live',
  logGroup: 'root',
  summary: 'Forgets a closed socket and its watches',
  table: ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  cognito: [],
} satisfies SocketRouteRow;

export const socketWatch = {
  id: 'socket.watch',
  routeKey: 'watch',
  entry: 'functions/socket/watch.ts',
  group: 'live',
  logGroup: 'root',
  summary: "Starts sending a board's events to the socket (members only)",
  body: boardAction,
  table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  cognito: [],
} satisfies SocketRouteRow;

export const socketUnwatch = {
  id: 'socket.unwatch',
  routeKey: 'unwatch',
  entry: 'functions/socket/unwatch.ts',
  group: 'live',
  logGroup: 'root',
  summary: "Stops sending a board's events to the socket",
  body: boardAction,
  table: ['dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
  cognito: [],
} satisfies SocketRouteRow;

export const socketPing = {
  id: 'socket.ping',
  routeKey: 'ping',
  entry: 'functions/socket/ping.ts',
  group: 'live',
  logGroup: 'root',
  summary: 'Answers pong (keeps an idle socket open)',
  table: [],
  cognito: [],
} satisfies SocketRouteRow;

export const socketDefault = {
  id: 'socket.default',
  routeKey: '$default',
  entry: 'functions/socket/default.ts',
  group: 'live',
  logGroup: 'root',
  summary: 'Answers any other message with a bad_request error; the socket stays open',
  table: [],
  cognito: [],
} satisfies SocketRouteRow;
