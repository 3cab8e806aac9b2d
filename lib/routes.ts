import { docsFileParams } from './contract/docs-assets';
import type { Lazy } from './contract/schemas';
import * as s from './contract/schemas';
import type { AccessRule } from './data/access';
import { changeRecordFilter, deletionRecordFilter } from './data/changes';
import { LONGEST_ROUTE_SECONDS } from './runtime/aws-limits';
import type { EnvName } from './runtime/config';

/**
 * THE route table. CDK makes one HTTP API route and one function per row, the local server
 * serves the same rows, the tests walk them, and `lib/http/route.ts` reads a row's access rule
 * and schemas. `table` lists the exact IAM actions the function's role gets on the table (a
 * transaction needs the per-item actions it contains); `index` those on the table's index.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type TableAction =
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:BatchWriteItem'
  | 'dynamodb:ConditionCheckItem';
export type CognitoAction = 'cognito-idp:AdminConfirmSignUp' | 'cognito-idp:AdminDeleteUser';

/** What every function row says, whatever invokes it: CDK makes its function and role from this. */
export interface FunctionRow {
  /** Handler source, relative to the repository root; exports `handler`. */
  entry: string;
  summary: string;
  table: TableAction[];
  /** Actions on the table's index (lib/data/table.ts), granted on the index alone. */
  index?: 'dynamodb:Query'[];
  cognito: CognitoAction[];
  /** `execute-api:ManageConnections` on the WebSocket stage: only functions that send to sockets. */
  manageConnections?: boolean;
  /** Configuration the function reads beyond the table and the pool (lib/runtime/config.ts). */
  env?: EnvName[];
  /** Function timeout; default 10 s (`functionTimeoutSeconds`). */
  timeoutSeconds?: number;
  /** Business metric counted on each success (CloudWatch namespace TaskBoard). */
  metric?: string;
}

export interface RouteRow extends FunctionRow {
  method: HttpMethod | 'ANY';
  /** Path template as API Gateway writes it, or `$default` for the catch-all. */
  path: string;
  access: AccessRule;
  params?: Lazy;
  body?: Lazy;
  success: { status: number; schema?: Lazy };
  /** Error statuses of the route's own rules, beyond those its access, params and body imply. */
  errors?: number[];
  /**
   * Honours an Idempotency-Key (lib/http/idempotency.ts): the POSTs that create something. Set
   * by `withIdempotencyKeys`. `caller`: the key belongs to the caller and the first answer is
   * kept for the retries. `account` (registration, no caller yet): the key belongs to the account
   * the body names, and since the answer holds credentials it is never kept: a retry makes it
   * again (a new login) without creating the account twice.
   */
  idempotent?: 'caller' | 'account';
  /**
   * `identity`: the route calls Cognito (sign-up, sign-in, tokens), whose own quotas are far
   * lower than the API's, so the stage throttles it at the stricter `authThrottle` rate.
   */
  throttle?: 'identity';
}

/** A function's timeout: the row's own, or 10 s. */
export const functionTimeoutSeconds = (row: Pick<FunctionRow, 'timeoutSeconds'>) => row.timeoutSeconds ?? 10;

/** What an invocation has left: Lambda's count, or the row's whole timeout where there is no Lambda context. */
export const remainingMsOf = (
  context: { getRemainingTimeInMillis?: () => number } | undefined,
  row: Pick<FunctionRow, 'timeoutSeconds'>,
) => context?.getRemainingTimeInMillis?.() ?? functionTimeoutSeconds(row) * 1000;

/** Every read by key goes through BatchGetItem (lib/data/db.ts getItems), single keys included. */
const boardRead: TableAction[] = ['dynamodb:BatchGetItem'];

/**
 * A row that honours an Idempotency-Key (lib/http/idempotency.ts). Its records are written with
 * conditional PutItems only (lib/data/idempotency.ts), which every create already has: no other
 * action is granted for them. Socket tickets do not honour keys: a ticket is a secret the table
 * never holds, and a retried ticket request just gets another (the unused one expires in 60 s).
 */
const withIdempotencyKeys = (table: TableAction[], owner: 'caller' | 'account' = 'caller') => ({
  idempotent: owner,
  table: table.includes('dynamodb:PutItem') ? table : [...table, 'dynamodb:PutItem' as const],
});

export const routes = {
  health: {
    method: 'GET',
    path: '/health',
    entry: 'functions/health.ts',
    summary: 'Liveness of the service',
    access: { scope: 'public' },
    success: { status: 200, schema: s.health },
    table: [],
    cognito: [],
  },
  openapi: {
    method: 'GET',
    path: '/openapi.json',
    entry: 'functions/openapi.ts',
    summary: 'This API described as OpenAPI 3.1',
    access: { scope: 'public' },
    success: { status: 200 },
    table: [],
    cognito: [],
  },
  asyncapi: {
    method: 'GET',
    path: '/asyncapi.json',
    entry: 'functions/asyncapi.ts',
    summary: 'The live board events protocol (WebSocket) described as AsyncAPI 3',
    access: { scope: 'public' },
    success: { status: 200 },
    table: [],
    cognito: [],
    // Its servers name this deployment's socket address.
    env: ['SOCKET_URL'],
  },
  docs: {
    method: 'GET',
    path: '/docs',
    entry: 'functions/docs/page.ts',
    summary: 'This API as an interactive reference page (Swagger UI), served by the service itself',
    access: { scope: 'public' },
    success: { status: 200 },
    table: [],
    cognito: [],
  },
  'docs.file': {
    method: 'GET',
    path: '/docs/{file}',
    entry: 'functions/docs/file.ts',
    summary: "A script, style or image of the reference page (an allow-list of the renderer's files)",
    access: { scope: 'public' },
    params: docsFileParams,
    success: { status: 200 },
    table: [],
    errors: [404],
    cognito: [],
  },
  'auth.register': {
    method: 'POST',
    path: '/auth/register',
    throttle: 'identity',
    entry: 'functions/auth/register.ts',
    summary: 'Register a user and receive an access token',
    access: { scope: 'public' },
    body: s.registerBody,
    success: { status: 201, schema: s.tokenResponse },
    ...withIdempotencyKeys(['dynamodb:PutItem'], 'account'),
    errors: [409],
    metric: 'UserRegistered',
    cognito: ['cognito-idp:AdminConfirmSignUp', 'cognito-idp:AdminDeleteUser'],
  },
  'auth.login': {
    method: 'POST',
    path: '/auth/login',
    throttle: 'identity',
    entry: 'functions/auth/login.ts',
    summary: 'Log in with email and password',
    access: { scope: 'public' },
    body: s.loginBody,
    success: { status: 200, schema: s.tokenResponse },
    table: [],
    errors: [401],
    cognito: [],
  },
  'auth.refresh': {
    method: 'POST',
    path: '/auth/refresh',
    throttle: 'identity',
    entry: 'functions/auth/refresh.ts',
    summary: 'Exchange a refresh token for a new access token',
    // No bearer token: the refresh token in the body is the credential (as the password is for login).
    access: { scope: 'public' },
    body: s.refreshBody,
    success: { status: 200, schema: s.tokenResponse },
    table: [],
    errors: [401],
    cognito: [], // InitiateAuth is a public (unauthenticated) Cognito API: no IAM action
  },
  'auth.logout': {
    method: 'POST',
    path: '/auth/logout',
    throttle: 'identity',
    entry: 'functions/auth/logout.ts',
    summary: 'Log out: revoke a refresh token so that it can no longer be refreshed',
    access: { scope: 'public' },
    body: s.refreshBody,
    success: { status: 204 },
    table: [],
    errors: [401],
    cognito: [], // RevokeToken: Cognito evaluates no IAM policy for it (public client, no secret)
  },
  'boards.list': {
    method: 'GET',
    path: '/boards',
    entry: 'functions/boards/list.ts',
    summary: "List the caller's boards, newest first",
    access: { scope: 'user' },
    success: { status: 200, schema: s.boardList },
    table: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
    // A list too large for one answer (over 6 MB even compressed) is 422, naming its boards.
    errors: [422],
    cognito: [],
  },
  'boards.create': {
    method: 'POST',
    path: '/boards',
    entry: 'functions/boards/create.ts',
    summary: 'Create a board owned by the caller',
    access: { scope: 'user' },
    body: s.titleBody,
    success: { status: 201, schema: s.board },
    ...withIdempotencyKeys(['dynamodb:PutItem']),
    metric: 'BoardCreated',
    cognito: [],
  },
  'boards.get': {
    method: 'GET',
    path: '/boards/{id}',
    entry: 'functions/boards/get.ts',
    summary: 'Read a board with its columns and cards',
    access: { scope: 'board', via: 'board', role: 'member' },
    params: s.idParams,
    success: { status: 200, schema: s.boardTree },
    table: [...boardRead, 'dynamodb:Query'],
    // A tree too large for one answer (over 6 MB even compressed) is 422, naming its columns.
    errors: [422],
    cognito: [],
  },
  'boards.rename': {
    method: 'PATCH',
    path: '/boards/{id}',
    entry: 'functions/boards/rename.ts',
    summary: 'Rename a board',
    access: { scope: 'board', via: 'board', role: 'member' },
    params: s.idParams,
    body: s.titleBody,
    success: { status: 200, schema: s.board },
    table: [...boardRead, 'dynamodb:UpdateItem'],
    cognito: [],
  },
  'boards.delete': {
    method: 'DELETE',
    path: '/boards/{id}',
    entry: 'functions/boards/delete.ts',
    summary: 'Delete a board and everything on it (owners only)',
    access: { scope: 'board', via: 'board', role: 'owner' },
    params: s.idParams,
    success: { status: 204 },
    table: [...boardRead, 'dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'],
    metric: 'BoardDeleted',
    cognito: [],
  },
  'columns.create': {
    method: 'POST',
    path: '/boards/{id}/columns',
    entry: 'functions/columns/create.ts',
    summary: 'Append a column to a board',
    access: { scope: 'board', via: 'board', role: 'member' },
    params: s.idParams,
    body: s.titleBody,
    success: { status: 201, schema: s.column },
    ...withIdempotencyKeys([...boardRead, 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']),
    metric: 'ColumnCreated',
    cognito: [],
  },
  'cards.create': {
    method: 'POST',
    path: '/columns/{id}/cards',
    entry: 'functions/cards/create.ts',
    summary: 'Append a card to a column',
    access: { scope: 'board', via: 'column', role: 'member' },
    params: s.idParams,
    body: s.createCardBody,
    success: { status: 201, schema: s.card },
    ...withIdempotencyKeys([...boardRead, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem']),
    index: ['dynamodb:Query'],
    metric: 'CardCreated',
    cognito: [],
  },
  'cards.get': {
    method: 'GET',
    path: '/cards/{id}',
    entry: 'functions/cards/get.ts',
    summary: 'Read a card',
    access: { scope: 'board', via: 'card', role: 'member' },
    params: s.idParams,
    success: { status: 200, schema: s.card },
    table: boardRead,
    cognito: [],
  },
  'cards.update': {
    method: 'PATCH',
    path: '/cards/{id}',
    entry: 'functions/cards/update.ts',
    summary: "Change a card's title or description",
    access: { scope: 'board', via: 'card', role: 'member' },
    params: s.idParams,
    body: s.updateCardBody,
    success: { status: 200, schema: s.card },
    table: [...boardRead, 'dynamodb:UpdateItem'],
    cognito: [],
  },
  'cards.delete': {
    method: 'DELETE',
    path: '/cards/{id}',
    entry: 'functions/cards/delete.ts',
    summary: 'Delete a card',
    access: { scope: 'board', via: 'card', role: 'member' },
    params: s.idParams,
    success: { status: 204 },
    table: [...boardRead, 'dynamodb:DeleteItem', 'dynamodb:PutItem'],
    metric: 'CardDeleted',
    cognito: [],
  },
  'cards.move': {
    method: 'PATCH',
    path: '/cards/{id}/move',
    entry: 'functions/cards/move.ts',
    summary: 'Move a card between two neighbours, in its column or another of the board',
    access: { scope: 'board', via: 'card', role: 'member' },
    params: s.idParams,
    body: s.moveCardBody,
    success: { status: 200, schema: s.card },
    table: [...boardRead, 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    metric: 'CardMoved',
    cognito: [],
  },
  'columns.get': {
    method: 'GET',
    path: '/columns/{id}',
    entry: 'functions/columns/get.ts',
    summary: 'Read a column with its cards',
    access: { scope: 'board', via: 'column', role: 'member' },
    params: s.idParams,
    success: { status: 200, schema: s.columnWithCards },
    table: boardRead,
    index: ['dynamodb:Query'],
    // A column too large for one answer (over 6 MB even compressed) is 422, naming its cards.
    errors: [422],
    cognito: [],
  },
  'columns.rename': {
    method: 'PATCH',
    path: '/columns/{id}',
    entry: 'functions/columns/rename.ts',
    summary: 'Rename a column',
    access: { scope: 'board', via: 'column', role: 'member' },
    params: s.idParams,
    body: s.titleBody,
    success: { status: 200, schema: s.column },
    table: [...boardRead, 'dynamodb:UpdateItem'],
    cognito: [],
  },
  'columns.delete': {
    method: 'DELETE',
    path: '/columns/{id}',
    entry: 'functions/columns/delete.ts',
    summary: 'Delete a column and its cards',
    access: { scope: 'board', via: 'column', role: 'member' },
    params: s.idParams,
    success: { status: 204 },
    table: [...boardRead, 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    cognito: [],
  },
  'columns.move': {
    method: 'PATCH',
    path: '/columns/{id}/move',
    entry: 'functions/columns/move.ts',
    summary: 'Move a column between two columns of its board',
    access: { scope: 'board', via: 'column', role: 'member' },
    params: s.idParams,
    body: s.moveColumnBody,
    success: { status: 200, schema: s.column },
    table: [...boardRead, 'dynamodb:UpdateItem'],
    cognito: [],
  },
  'members.add': {
    method: 'POST',
    path: '/boards/{id}/members',
    entry: 'functions/members/add.ts',
    summary: 'Add a registered user to a board (owners only)',
    access: { scope: 'board', via: 'board', role: 'owner' },
    params: s.idParams,
    body: s.addMemberBody,
    success: { status: 201, schema: s.member },
    ...withIdempotencyKeys([...boardRead, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem']),
    errors: [409],
    metric: 'MemberAdded',
    cognito: [],
  },
  'members.list': {
    method: 'GET',
    path: '/boards/{id}/members',
    entry: 'functions/members/list.ts',
    summary: "List a board's members in the order they joined",
    access: { scope: 'board', via: 'board', role: 'member' },
    params: s.idParams,
    success: { status: 200, schema: s.memberList },
    table: [...boardRead, 'dynamodb:Query'],
    cognito: [],
  },
  'members.update': {
    method: 'PATCH',
    path: '/boards/{id}/members/{user_id}',
    entry: 'functions/members/update.ts',
    summary: "Change a member's role (owners only)",
    access: { scope: 'board', via: 'board', role: 'owner' },
    params: s.memberParams,
    body: s.changeRoleBody,
    success: { status: 200, schema: s.member },
    table: [...boardRead, 'dynamodb:UpdateItem'],
    errors: [409],
    cognito: [],
  },
  'members.remove': {
    method: 'DELETE',
    path: '/boards/{id}/members/{user_id}',
    entry: 'functions/members/remove.ts',
    summary: 'Remove a member (owners), or leave the board (members)',
    access: { scope: 'board', via: 'board', role: 'member' },
    params: s.memberParams,
    success: { status: 204 },
    table: [...boardRead, 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    errors: [409],
    cognito: [],
  },
  'labels.create': {
    method: 'POST',
    path: '/boards/{id}/labels',
    entry: 'functions/labels/create.ts',
    summary: 'Create a label on a board (any member; names unique case-insensitively, 100 a board)',
    access: { scope: 'board', via: 'board', role: 'member' },
    params: s.idParams,
    body: s.createLabelBody,
    success: { status: 201, schema: s.label },
    ...withIdempotencyKeys([...boardRead, 'dynamodb:PutItem', 'dynamodb:UpdateItem']),
    errors: [409],
    cognito: [],
  },
  'labels.list': {
    method: 'GET',
    path: '/boards/{id}/labels',
    entry: 'functions/labels/list.ts',
    summary: "List a board's labels by name (case-insensitively), then id",
    access: { scope: 'board', via: 'board', role: 'member' },
    params: s.idParams,
    success: { status: 200, schema: s.labelList },
    table: [...boardRead, 'dynamodb:Query'],
    cognito: [],
  },
  'labels.update': {
    method: 'PATCH',
    path: '/labels/{id}',
    entry: 'functions/labels/update.ts',
    summary: 'Rename or recolour a label (null or omitted leaves a field as it is)',
    access: { scope: 'board', via: 'label', role: 'member' },
    params: s.idParams,
    body: s.updateLabelBody,
    success: { status: 200, schema: s.label },
    table: [...boardRead, 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
    errors: [409],
    cognito: [],
  },
  'labels.delete': {
    method: 'DELETE',
    path: '/labels/{id}',
    entry: 'functions/labels/delete.ts',
    summary: 'Delete a label; it is taken off every card that carries it',
    access: { scope: 'board', via: 'label', role: 'member' },
    params: s.idParams,
    success: { status: 204 },
    table: [...boardRead, 'dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    cognito: [],
    timeoutSeconds: LONGEST_ROUTE_SECONDS,
  },
  'cards.labels.attach': {
    method: 'PUT',
    path: '/cards/{id}/labels/{label_id}',
    entry: 'functions/cards/attach-label.ts',
    summary: "Put one of the board's labels on a card (idempotent; 20 a card)",
    access: { scope: 'board', via: 'card', role: 'member' },
    params: s.cardLabelParams,
    success: { status: 200, schema: s.card },
    table: [...boardRead, 'dynamodb:UpdateItem'],
    errors: [409],
    cognito: [],
  },
  'cards.labels.detach': {
    method: 'DELETE',
    path: '/cards/{id}/labels/{label_id}',
    entry: 'functions/cards/detach-label.ts',
    summary: 'Take a label off a card (idempotent)',
    access: { scope: 'board', via: 'card', role: 'member' },
    params: s.cardLabelParams,
    success: { status: 200, schema: s.card },
    table: [...boardRead, 'dynamodb:UpdateItem'],
    cognito: [],
  },
  'realtime.tickets': {
    method: 'POST',
    path: '/realtime/tickets',
    entry: 'functions/realtime/tickets.ts',
    summary: 'Get a single-use ticket for a live board events socket (docs/asyncapi.yaml)',
    access: { scope: 'user' },
    success: { status: 201, schema: s.ticketResponse },
    table: ['dynamodb:PutItem'],
    cognito: [],
    env: ['SOCKET_URL', 'TICKET_SECONDS'],
  },
  fallback: {
    method: 'ANY',
    path: '$default',
    entry: 'functions/fallback.ts',
    summary: 'Unknown path (404) or known path with another method (405)',
    access: { scope: 'public' },
    success: { status: 404 },
    table: [],
    cognito: [],
  },
} satisfies Record<string, RouteRow>;

/**
 * The WebSocket API's routes (docs/asyncapi.yaml): one function per row, like the HTTP rows. The
 * API routes a message by its `action`; `$default` takes anything else. An action's function
 * answers the socket through the route response (no ManageConnections needed for that).
 */
export interface SocketRouteRow extends FunctionRow {
  /** `$connect`, `$disconnect`, `$default`, or the `action` of the messages it takes. */
  routeKey: string;
  /** Message schema (action rows). */
  body?: Lazy;
}

/** The WebSocket API's stage: the path of every socket address, on AWS and on the local stack. */
export const SOCKET_STAGE = 'live';

export const socketRoutes = {
  'socket.connect': {
    routeKey: '$connect',
    entry: 'functions/socket/connect.ts',
    summary: 'Opens a socket for the holder of a valid ticket (401 otherwise)',
    table: ['dynamodb:DeleteItem', 'dynamodb:PutItem'],
    cognito: [],
  },
  'socket.disconnect': {
    routeKey: '$disconnect',
    entry: 'functions/socket/disconnect.ts',
    summary: 'Forgets a closed socket and its watches',
    table: ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
    cognito: [],
  },
  'socket.watch': {
    routeKey: 'watch',
    entry: 'functions/socket/watch.ts',
    summary: "Starts sending a board's events to the socket (members only)",
    body: s.boardAction,
    table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    cognito: [],
  },
  'socket.unwatch': {
    routeKey: 'unwatch',
    entry: 'functions/socket/unwatch.ts',
    summary: "Stops sending a board's events to the socket",
    body: s.boardAction,
    table: ['dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
    cognito: [],
  },
  'socket.ping': {
    routeKey: 'ping',
    entry: 'functions/socket/ping.ts',
    summary: 'Answers pong (keeps an idle socket open)',
    table: [],
    cognito: [],
  },
  'socket.default': {
    routeKey: '$default',
    entry: 'functions/socket/default.ts',
    summary: 'Answers any other message with a bad_request error; the socket stays open',
    table: [],
    cognito: [],
  },
} satisfies Record<string, SocketRouteRow>;

/**
 * Functions fed by the table's stream: CDK makes a DynamoDB event source with this filter, and
 * the local stack's poller (infra/local/stream-poller.ts) applies the same filter and retry rules.
 */
export interface StreamConsumerRow extends FunctionRow {
  filter: object;
  batchSize: number;
  retryAttempts: number;
  maxRecordAgeSeconds: number;
}

export const streamConsumers = {
  'events.broadcast': {
    entry: 'functions/events/broadcast.ts',
    summary: "Sends each committed board change to the board's watchers",
    filter: changeRecordFilter,
    batchSize: 100,
    retryAttempts: 8,
    maxRecordAgeSeconds: 3600,
    table: ['dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
    cognito: [],
    manageConnections: true,
    env: ['SOCKET_CALLBACK_URL'],
    timeoutSeconds: 60,
  },
  'children.collect': {
    entry: 'functions/events/collect.ts',
    summary: "Removes a deleted board's items, or a deleted column's cards, after the request answered",
    filter: deletionRecordFilter,
    batchSize: 10,
    // Every attempt makes progress and is safe to repeat; a day of retries before the DLQ.
    retryAttempts: 100,
    maxRecordAgeSeconds: 24 * 3600,
    table: ['dynamodb:Query', 'dynamodb:BatchWriteItem', 'dynamodb:UpdateItem'],
    index: ['dynamodb:Query'],
    cognito: [],
    timeoutSeconds: 900,
  },
} satisfies Record<string, StreamConsumerRow>;

/** Functions run on a schedule (EventBridge on AWS, a timer in the local stack). */
export interface ScheduleRow extends FunctionRow {
  everyMinutes: number;
}

export const schedules = {
  'sockets.sweep': {
    entry: 'functions/events/sweep.ts',
    summary: 'Closes sockets whose token has expired (token.expired), within a minute of the expiry',
    everyMinutes: 1,
    table: ['dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
    cognito: [],
    manageConnections: true,
    env: ['SOCKET_CALLBACK_URL'],
    timeoutSeconds: 50,
  },
} satisfies Record<string, ScheduleRow>;

export type SocketRouteId = keyof typeof socketRoutes;
export type StreamConsumerId = keyof typeof streamConsumers;
export type ScheduleId = keyof typeof schedules;

export type Routes = typeof routes;
export type RouteId = keyof Routes;
export const routeIds = Object.keys(routes) as RouteId[];

/**
 * The catch-all row (API Gateway's `$default` route: unknown paths and wrong methods). Every other
 * row is one method on one path.
 */
export const isCatchAll = (row: Pick<RouteRow, 'path'>) => row.path === '$default';

/** The HTTP API's route key of a row: `$default`, or `<METHOD> <path>`. */
export const routeKeyOf = (row: Pick<RouteRow, 'method' | 'path'>) =>
  isCatchAll(row) ? '$default' : `${row.method} ${row.path}`;

/** Matches a concrete path against one of the table's templates: its parameters, or undefined. */
export function matchPath(template: string, path: string): Record<string, string> | undefined {
  const names: string[] = [];
  const pattern = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const match = new RegExp(`^${pattern}$`).exec(path);
  if (!match) return undefined;
  try {
    return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1]!)]));
  } catch {
    return undefined; // malformed percent-encoding: no route has such a path
  }
}

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

/** The methods the rows serve on a concrete path: the catch-all's `Allow` (none: 404). */
export const methodsAt = (path: string) => [
  ...new Set(servedRows().flatMap(([, row]) => (matchPath(row.path, path) ? [row.method] : []))),
];

/** Every method a row serves, and the preflight's own: what CORS allows, on AWS and locally. */
export const corsMethods = () => [...new Set(servedRows().map(([, row]) => row.method)), 'OPTIONS' as const];
