import type { Lazy, ResponseSchemaName } from '../contract/schemas';
import type { AccessRule } from '../data/access';
import type { PersonalTokenScope } from '../domain/personal-tokens';
import type { EnvName } from '../runtime/config';

/**
 * What a row of the route table is. Each row is its own export of a module of lib/rows, plain
 * data, so that a function imports its own row and esbuild leaves every other row (and the schemas
 * only they name) out of its bundle; lib/routes.ts assembles the rows into the one table that CDK,
 * the local stack, the documents and the tests walk. This module holds the types and the few
 * helpers the run-time chains need, and imports no row.
 */
type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type TableAction =
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:BatchWriteItem'
  | 'dynamodb:ConditionCheckItem';
/** Actions on the webhook deliveries queue (infra: its SQS queue; locally: infra/local/sqs.ts). */
type QueueAction = 'sqs:SendMessage';
/** Actions with the webhook secrets' KMS key (encryption context bound to the webhook; docs/webhooks.md). */
type KeyAction = 'kms:Encrypt' | 'kms:Decrypt';
type CognitoAction =
  | 'cognito-idp:AdminCreateUser'
  | 'cognito-idp:AdminDeleteUser'
  | 'cognito-idp:AdminGetUser'
  | 'cognito-idp:AdminInitiateAuth'
  | 'cognito-idp:AdminSetUserPassword'
  | 'cognito-idp:AdminUpdateUserAttributes'
  | 'cognito-idp:AdminUserGlobalSignOut'
  | 'cognito-idp:DescribeUserPoolClient';

/** What every function row says, whatever invokes it: CDK makes its function and role from this. */
export interface FunctionRow {
  /**
   * The row's id: its key in the assembled table, its name in logs and Idempotency-Key fingerprints.
   * Lower case, and typed so that each row keeps its id's literal type: the table's keys are typed
   * from its rows (lib/routes.ts).
   */
  id: Lowercase<string>;
  /** Handler source, relative to the repository root; exports `handler`. */
  entry: string;
  summary: string;
  /**
   * The exact IAM actions the function's role gets on the table (a transaction needs the per-item
   * actions it contains). Every read by key is a BatchGetItem (lib/data/db.ts getItems), single
   * keys included.
   */
  table: TableAction[];
  /** Actions on the table's index (lib/data/table.ts), granted on the index alone. */
  index?: 'dynamodb:Query'[];
  cognito: CognitoAction[];
  /** Actions on the webhook deliveries queue: only functions that enqueue a delivery. */
  queue?: QueueAction[];
  /** Actions with the webhook secrets' key: encrypt where a secret is made, decrypt where one signs. */
  key?: KeyAction[];
  /** `execute-api:ManageConnections` on the WebSocket stage: only functions that send to sockets. */
  manageConnections?: boolean;
  /** Configuration the function reads beyond the table and the pool (lib/runtime/config.ts). */
  env?: EnvName[];
  /** Function timeout; default 10 s (`functionTimeoutSeconds`). */
  timeoutSeconds?: number;
  /** Business metric counted on each success (CloudWatch namespace TaskBoard). */
  metric?: string;
  /**
   * The nested stack the function lives in (infra/layout.ts `groupOf`) when it is not the first
   * segment of the id: the service's own small rows share `service`, and the live events' rows
   * (the socket ticket, the WebSocket routes, the socket sweep) share `live`, as a stack of their
   * own would cost a nested stack resource, a template and a deploy-time stack operation each for
   * one or two functions. A new first segment gets a stack of its own, and a row never changes
   * group unless this or its id does, so adding rows never moves an existing function.
   */
  group?: 'service' | 'live';
  /**
   * `root`: the function's log group stays in the root stack, at the logical id it had when every
   * function was there (that layout's snapshot: test/infra/fixtures/stateful-resources.json),
   * because it holds logs (a year of them in prod); its function, in its group's stack, writes to
   * it across the boundary. Only the rows of that snapshot say so: any other row gets its log
   * group beside its function, so that it costs the root stack nothing but its route.
   */
  logGroup?: 'root';
}

export interface RouteRow extends FunctionRow {
  method: HttpMethod | 'ANY';
  /** Path template as API Gateway writes it, or `$default` for the catch-all. */
  path: string;
  access: AccessRule;
  params?: Lazy;
  /** Query parameters, checked like the path's (400 with every issue) and handed over with them in `params`. */
  query?: Lazy;
  body?: Lazy;
  /**
   * The success status, and the schema of its JSON body by name (lib/contract/schemas.ts
   * `responseSchemas`): only the documents and the contract tests read it, so a name keeps the
   * response schemas out of the functions' bundles.
   */
  success: { status: number; schema?: ResponseSchemaName };
  /** Error statuses of the route's own rules, beyond those its access, params and body imply. */
  errors?: number[];
  /**
   * Honours an Idempotency-Key (lib/http/idempotency.ts): the POSTs that create something. Its
   * records are written with conditional PutItems only (lib/data/idempotency.ts), so such a row's
   * `table` must hold `dynamodb:PutItem` (test/unit/route-table.test.ts holds it to that).
   * `caller`: the key belongs to the caller and the first answer is kept for the retries.
   * `account` (registration, no caller yet): the key belongs to the account the body names, and
   * since the answer holds credentials it is never kept: a retry makes it again (a new login)
   * without creating the account twice. Socket tickets do not honour keys: a ticket is a secret
   * the table never holds, and a retried ticket request just gets another (the unused one expires
   * in 60 s).
   */
  idempotent?: 'caller' | 'account';
  /**
   * Conditional requests (lib/http/conditional.ts): `read`, a GET answering an entity tag and
   * honouring `If-None-Match` (304); `write`, a change of a card honouring `If-Match` (412). Either
   * way a malformed `If-Match` or `If-None-Match` is 400 before any lookup.
   */
  conditional?: 'read' | 'write';
  /**
   * `identity`: the route calls Cognito (sign-up, sign-in, tokens), whose own quotas are far
   * lower than the API's, so the stage throttles it at the stricter `authThrottle` rate.
   */
  throttle?: 'identity';
  /**
   * Where the rate limiter's count goes (lib/http/rate-limit.ts `rateLimitPlacementOf`) on a
   * counted row whose first call is not a read, so that it adds no sequential round trip; without
   * it, a GET of scope user counts `beside` and every other row behind the `gate`.
   * - `fold`: the handler's first call is its own TransactWriteItems, which takes the counter's
   *   conditional increment as one more item (`heldCount()`): a refusal cancels the transaction,
   *   so the request writes nothing. A request refused before its handler runs (its body,
   *   parameters or Idempotency-Key: 400, 413, 415) never reaches that transaction, and is
   *   counted on its own as it is answered, 429 when over: one round trip, on that refusal only.
   * - `beside`: the handler changes nothing the request could be refused after (login's and
   *   refresh's InitiateAuth only answer tokens): it runs beside the count, and over the quota its
   *   answer is dropped for the 429 (no token leaves the function).
   * - `inside`: the handler reads first and changes after: the count runs beside its read, and
   *   the handler waits for it before its first change (`countGate()`), 429 when over.
   * A row left behind the gate (1 sequential round trip where nothing is read before it) is one
   * whose first call is the very thing the quota limits or cannot be undone, so it cannot run
   * beside the count and be dropped (docs/rate-limits.md, "Where it sits in a request"):
   * registration (SignUp creates a Cognito user), the verify-email request (it mails a code),
   * logout (a revoked token stays revoked).
   */
  rateLimitPlacement?: 'fold' | 'beside' | 'inside';
  /**
   * `operations`: a request counts as many requests as its body has `operations` (a batch), taken
   * at once: with fewer left in the window it is refused whole (429) and counts as one, as does a
   * request refused for anything else. Without it, a request counts as one.
   */
  rateLimitCost?: 'operations';
}

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

/**
 * Functions fed by the table's stream: CDK makes a DynamoDB event source with these filters, and
 * the local stack's poller (infra/local/stream-poller.ts) applies the same filters and retry rules.
 * The table holds at most two such rows (DynamoDB Streams: no more than two processes should read
 * one shard at a time, or GetRecords is throttled for every reader; docs/realtime.md "The readers").
 */
export interface StreamConsumerRow extends FunctionRow {
  /**
   * Lambda event filter patterns, 1 to 5 (Lambda's default quota of filters per event source
   * mapping): a record matching ANY of them is delivered, the others are never read into a batch.
   */
  filters: readonly object[];
  batchSize: number;
  retryAttempts: number;
  maxRecordAgeSeconds: number;
}

/**
 * The table stream's reader limits: at most two event source mappings read its shards (DynamoDB
 * Streams' "no more than two processes at the same time" per shard), each with at most five
 * filters (Lambda's default quota per event source mapping). test/unit/route-table.test.ts and
 * test/infra/realtime.test.ts hold the table and the synthesized templates to them.
 */
export const STREAM_READERS_MAX = 2;
export const STREAM_FILTERS_MAX = 5;

/**
 * Functions fed by the webhook deliveries queue: CDK makes an SQS event source (partial batch
 * responses) and the local stack's queue stand-in (infra/local/sqs.ts) invokes the handler the
 * same way, with the same batch size, visibility timeout and receive count before the
 * dead-letter queue.
 */
export interface QueueConsumerRow extends FunctionRow {
  batchSize: number;
  /** Receives of one message before it moves to the dead-letter queue. */
  maxReceiveCount: number;
  /** At most this many concurrent invocations (SQS event source's maximum concurrency, ≥ 2). */
  maxConcurrency: number;
}

/**
 * Functions the user pool invokes (Cognito Lambda triggers): CDK attaches each to the pool for its
 * operation, and the local stack's Lambda stand-in (infra/local/lambda.ts) runs it when the Cognito
 * emulator invokes it. Cognito calls a trigger synchronously and waits at most 5 s for its answer.
 */
export interface PoolTriggerRow extends FunctionRow {
  /** The pool's trigger, as Cognito's LambdaConfig names it. */
  trigger: 'CustomMessage';
}

/** Functions run on a schedule (EventBridge on AWS, a timer in the local stack). */
export interface ScheduleRow extends FunctionRow {
  everyMinutes: number;
}

/**
 * The rate-limit policy that counts a route's requests (docs/rate-limits.md), derived
 * from fields every row already has, so that no row states it twice: the routes that take
 * credentials in their body (public and throttled at the identity rate: register, login, refresh,
 * logout, password forgot and reset) count per client address; every route that takes a token
 * counts per user (and per address when the token is missing or bad); the other public routes
 * (health, the documents, the catch-all) are not counted. OpenAPI, CDK's grants and the chain
 * all read this one rule.
 */
export type RateLimitPolicy = 'user' | 'address';
export function rateLimitOf(row: Pick<RouteRow, 'access' | 'throttle'>): RateLimitPolicy | undefined {
  if (row.access.scope !== 'public') return 'user';
  return row.throttle === 'identity' ? 'address' : undefined;
}

/**
 * The board paths a personal token's `boards:` scopes reach: these first segments, and what is
 * under them. A card's comments are board content like its card (`/comments/{id}` edits and
 * deletes one), so they take the same scopes.
 */
const BOARD_PATH_SEGMENTS = ['boards', 'columns', 'cards', 'labels', 'comments'];

/**
 * The scope a personal access token needs on a route (docs/tokens.md), derived from the row's id,
 * method and path so that no row states it and a new row under a board path is covered as it is
 * added: `webhooks:admin` for the webhook rows (`webhooks.*`, those under /boards/{id}/webhooks
 * included); under /boards, /columns, /cards, /labels and /comments, `boards:read` for a GET and
 * `boards:write` for any other method; `boards:read` for the socket ticket. Undefined: no personal
 * token may call the route (the account and token routes, the service's own).
 */
export function personalTokenScopeOf(row: Pick<RouteRow, 'id' | 'method' | 'path'>): PersonalTokenScope | undefined {
  if (row.id.startsWith('webhooks.')) return 'webhooks:admin';
  if (row.method === 'POST' && row.path === '/realtime/tickets') return 'boards:read';
  if (!BOARD_PATH_SEGMENTS.includes(row.path.split('/')[1] ?? '')) return undefined;
  return row.method === 'GET' ? 'boards:read' : 'boards:write';
}

/**
 * POST /boards: `boards:write` allows it, except to a token limited to boards (`board_ids`), which
 * could not reach the board it made.
 */
export const createsBoard = (row: Pick<RouteRow, 'method' | 'path'>) => row.method === 'POST' && row.path === '/boards';

/** The one table action the rate limiter needs: an atomic conditional UpdateItem of the window's counter item. */
const RATE_LIMIT_ACTION = 'dynamodb:UpdateItem' satisfies TableAction;

/**
 * What a personal access token needs on every token route, whatever the route does with the table:
 * the read of the token's item by hash, and the write of its last use (docs/tokens.md).
 */
const PERSONAL_TOKEN_ACTIONS: TableAction[] = ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'];

/**
 * Every table action a function uses: its row's, plus the limiter's on a counted route and a
 * personal token's on a token route. What its IAM role is granted (infra/api-function.ts) and
 * what the local stack's stand-in allows.
 */
export function tableActionsOf(row: FunctionRow): TableAction[] {
  const route = 'method' in row ? (row as RouteRow) : undefined;
  const counted = route !== undefined && rateLimitOf(route) !== undefined;
  const tokens = route !== undefined && route.access.scope !== 'public';
  const added: TableAction[] = [];
  if (counted) added.push(RATE_LIMIT_ACTION);
  if (tokens) added.push(...PERSONAL_TOKEN_ACTIONS);
  return [...row.table, ...new Set(added.filter((action) => !row.table.includes(action)))];
}

/** The WebSocket API's stage: the path of every socket address, on AWS and on the local stack. */
export const SOCKET_STAGE = 'live';

/** A function's timeout: the row's own, or 10 s. */
export const functionTimeoutSeconds = (row: Pick<FunctionRow, 'timeoutSeconds'>) => row.timeoutSeconds ?? 10;

/** What an invocation has left: Lambda's count, or the row's whole timeout where there is no Lambda context. */
export const remainingMsOf = (
  context: { getRemainingTimeInMillis?: () => number } | undefined,
  row: Pick<FunctionRow, 'timeoutSeconds'>,
) => context?.getRemainingTimeInMillis?.() ?? functionTimeoutSeconds(row) * 1000;

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

/**
 * The methods served on a concrete path, given each path template's methods: the catch-all's
 * `Allow` (none: 404).
 */
export const methodsServedAt = (methodsByPath: Record<string, readonly string[]>, path: string) => [
  ...new Set(Object.entries(methodsByPath).flatMap(([template, methods]) => (matchPath(template, path) ? methods : []))),
];
