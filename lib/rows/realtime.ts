import type { RouteRow } from './row';
import type { RouteText } from './text';

/** Live board events over HTTP: the row that hands out tickets for the socket (lib/rows/socket.ts). */

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
