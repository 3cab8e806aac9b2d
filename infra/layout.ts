/**
 * Where each row's resources live (docs/infrastructure.md). The root stack holds what must never
 * move: the data, both APIs with their stages and every route, the log groups that already hold
 * logs, the stream consumers, the dashboard and the alarm topic. Every other function, with its
 * role, invoke permission, API integration and its group's alarms, lives in a nested stack of its
 * group, so that the root grows by one route a row and each group's stack by five resources a row.
 */

/**
 * A row's group is the first segment of its id (`cards.labels.attach` → `cards`), except that
 * the service's own small rows share one stack, and so do the live events' rows (the socket
 * ticket, the WebSocket routes, the socket sweep): a stack a row would cost a nested stack
 * resource, a template and a deploy-time stack operation each for a single function. A new first
 * segment (`accounts`, `webhooks`) gets a stack of its own; a row never changes group unless its
 * id does, so adding rows never moves an existing function.
 */
const SHARED_GROUPS: Record<string, string> = {
  health: 'service',
  openapi: 'service',
  asyncapi: 'service',
  docs: 'service',
  fallback: 'service',
  realtime: 'live',
  socket: 'live',
  sockets: 'live',
};

export function groupOf(rowId: string): string {
  const segment = rowId.split('.')[0]!;
  return SHARED_GROUPS[segment] ?? segment;
}

/** Construct id of a group's nested stack: `cards` → `CardsFunctions`. */
export const groupStackIdOf = (group: string) => `${group[0]!.toUpperCase()}${group.slice(1)}Functions`;

/**
 * Rows whose log groups a deployment of the single-stack layout has in its root stack (that
 * layout's snapshot: test/infra/fixtures/stateful-resources.json): those log groups hold logs (a
 * year of them in prod) and stay where they are, at the same logical id, with their functions
 * writing to them across the stack boundary. Any other row gets its log group beside its
 * function, in its group's stack, so that it costs the root nothing but its route.
 */
export const ROOT_LOG_GROUP_ROWS: ReadonlySet<string> = new Set([
  'health',
  'openapi',
  'asyncapi',
  'docs',
  'docs.file',
  'auth.register',
  'auth.login',
  'auth.refresh',
  'auth.logout',
  'boards.list',
  'boards.create',
  'boards.get',
  'boards.rename',
  'boards.delete',
  'columns.create',
  'cards.create',
  'cards.get',
  'cards.update',
  'cards.delete',
  'cards.move',
  'columns.get',
  'columns.rename',
  'columns.delete',
  'columns.move',
  'members.add',
  'members.list',
  'members.update',
  'members.remove',
  'labels.create',
  'labels.list',
  'labels.update',
  'labels.delete',
  'cards.labels.attach',
  'cards.labels.detach',
  'realtime.tickets',
  'fallback',
  'socket.connect',
  'socket.disconnect',
  'socket.watch',
  'socket.unwatch',
  'socket.ping',
  'socket.default',
  'sockets.sweep',
]);

/**
 * An alarm on metric math reads at most 10 metrics (CloudWatch's hard limit), so a group's
 * errors (or throttles) alarm covers at most this many functions; a larger group has several.
 */
export const FUNCTIONS_PER_ALARM = 10;
