import { boardAction } from '../contract/schemas';
import type { SocketRouteRow } from './row';

/** The WebSocket API's routes (docs/asyncapi.yaml): a ticket from `realtime.tickets` opens a socket. */

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
