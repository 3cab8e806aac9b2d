import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RouteId, type RouteRow, routes } from '../lib/routes';

/**
 * Writes one sample HTTP API (payload v2) event per route row to events/, for
 * `sam local invoke -e events/<route>.json`. Placeholders: replace ACCESS_TOKEN with a token
 * from /auth/register or /auth/login, and the placeholder ids with real ones.
 * Run: node --import tsx scripts/make-events.ts
 */
export const PLACEHOLDER = {
  token: 'ACCESS_TOKEN',
  board: '11111111-1111-4111-8111-111111111111',
  column: '22222222-2222-4222-8222-222222222222',
  card: '33333333-3333-4333-8333-333333333333',
  user: '44444444-4444-4444-8444-444444444444',
  teammateEmail: 'teammate@example.com',
} as const;

const samples: Record<RouteId, { id?: string; userId?: string; body?: unknown; path?: string }> = {
  health: {},
  openapi: {},
  'auth.register': { body: { email: 'new-user@example.com', password: 'correct horse battery', display_name: 'New User' } },
  'auth.login': { body: { email: 'new-user@example.com', password: 'correct horse battery' } },
  'boards.list': {},
  'boards.create': { body: { title: 'Roadmap' } },
  'boards.get': { id: PLACEHOLDER.board },
  'boards.rename': { id: PLACEHOLDER.board, body: { title: 'Roadmap 2027' } },
  'boards.delete': { id: PLACEHOLDER.board },
  'columns.create': { id: PLACEHOLDER.board, body: { title: 'To do' } },
  'cards.create': { id: PLACEHOLDER.column, body: { title: 'Write the README', description: 'Quick start first' } },
  'cards.get': { id: PLACEHOLDER.card },
  'cards.update': { id: PLACEHOLDER.card, body: { description: 'Quick start and deploy' } },
  'cards.delete': { id: PLACEHOLDER.card },
  'cards.move': { id: PLACEHOLDER.card, body: { target_column_id: PLACEHOLDER.column } },
  'columns.get': { id: PLACEHOLDER.column },
  'columns.rename': { id: PLACEHOLDER.column, body: { title: 'Doing' } },
  'columns.delete': { id: PLACEHOLDER.column },
  'columns.move': { id: PLACEHOLDER.column, body: { after_id: null } },
  'members.add': { id: PLACEHOLDER.board, body: { email: PLACEHOLDER.teammateEmail, role: 'member' } },
  'realtime.tickets': {},
  'members.list': { id: PLACEHOLDER.board },
  'members.update': { id: PLACEHOLDER.board, userId: PLACEHOLDER.user, body: { role: 'owner' } },
  'members.remove': { id: PLACEHOLDER.board, userId: PLACEHOLDER.user },
  fallback: { path: '/no/such/path' },
};

export function sampleEvent(routeId: RouteId) {
  const row: RouteRow = routes[routeId];
  const sample = samples[routeId];
  const method = row.method === 'ANY' ? 'GET' : row.method;
  const path = sample.path ?? row.path.replace('{id}', sample.id ?? '').replace('{user_id}', sample.userId ?? '');
  const routeKey = row.path === '$default' ? '$default' : `${row.method} ${row.path}`;
  const headers: Record<string, string> = { accept: 'application/json', host: 'localhost:3000' };
  if (row.access.scope !== 'public') headers.authorization = `Bearer ${PLACEHOLDER.token}`;
  if (sample.body) headers['content-type'] = 'application/json';
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers,
    ...(sample.id ? { pathParameters: { id: sample.id, ...(sample.userId ? { user_id: sample.userId } : {}) } } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'sample-event' },
      requestId: `sample-${routeId}`,
      routeKey,
      stage: '$default',
      time: '23/Nov/2026:10:00:00 +0000',
      timeEpoch: 1795428000000,
    },
    ...(sample.body ? { body: JSON.stringify(sample.body) } : {}),
    isBase64Encoded: false,
  };
}

export const eventFileOf = (routeId: string) => `${routeId.replace('.', '-')}.json`;

if (process.argv[1]?.endsWith('make-events.ts')) {
  for (const routeId of Object.keys(routes) as RouteId[]) {
    writeFileSync(join('events', eventFileOf(routeId)), `${JSON.stringify(sampleEvent(routeId), null, 2)}\n`);
  }
}
