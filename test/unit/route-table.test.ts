import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import * as v from 'valibot';
import type { AccessRule } from '../../lib/data/access';
import { errorStatuses } from '../../lib/http/openapi';
import { publicRoute } from '../../lib/http/public-route';
import { route } from '../../lib/http/route';
import {
  type DocumentedRouteId,
  type FunctionRow,
  poolTriggers,
  queueConsumers,
  type RouteRow,
  routes,
  routeTexts,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../../lib/routes';
import { cardsGet } from '../../lib/rows/cards';
import { health } from '../../lib/rows/health';
import { rateLimitOf } from '../../lib/rows/row';
import { servedMethods } from '../../lib/rows/served';
import { ENV } from '../../lib/runtime/config';
import { SERVED_FILE, servedText } from '../../scripts/write-openapi';

/**
 * Deny by default: every row of the route table declares an access rule of a
 * known shape, a row without one does not type-check (`npm run typecheck` fails on an unused
 * `@ts-expect-error`), the public rows are exactly the ones named here, and every handler goes
 * through `route()` with its own row, so the row's rule is the one applied. The behaviour of
 * each rule against a running stack is walked in test/integration/authorization-matrix.test.ts.
 */

const ROOT = join(__dirname, '..', '..');
const rows = Object.entries(routes) as [string, RouteRow][];

/** Exactly the shapes lib/data/access.ts AccessRule allows, with no extra keys. */
const knownAccessRule = v.variant('scope', [
  v.strictObject({ scope: v.literal('public') }),
  v.strictObject({ scope: v.literal('user') }),
  v.strictObject({
    scope: v.literal('board'),
    via: v.picklist(['board', 'column', 'card', 'label', 'webhook', 'comment']),
    role: v.picklist(['owner', 'member']),
  }),
]);

/** Adding a public row is a decision: it has to be made here too. */
const PUBLIC_ROWS = [
  'asyncapi',
  'auth.login',
  'auth.logout',
  // For whoever lost the password: the mailed code is the credential (docs/accounts.md).
  'auth.password.forgot',
  'auth.password.reset',
  'auth.refresh',
  'auth.register',
  'docs',
  'docs.file',
  'fallback',
  'health',
  'openapi',
];

// ---- compile-time: the table's type makes a missing or unknown access rule an error --------

/** Everything a row needs except its access rule, so each error below is about `access` alone. */
const base: Omit<RouteRow, 'access'> = {
  id: 'incomplete',
  method: 'GET',
  path: '/incomplete',
  entry: 'functions/health.ts',
  summary: 'A row that forgot its access rule',
  success: { status: 200 },
  table: [],
  cognito: [],
};

// @ts-expect-error a row without `access` is not a RouteRow
const withoutAccess: RouteRow = { ...base };
// @ts-expect-error `access` must name a scope
const emptyAccess: RouteRow = { ...base, access: {} };
// @ts-expect-error a board rule must say how the board is reached and which role is required
const boardWithoutRole: RouteRow = { ...base, access: { scope: 'board', via: 'board' } };
// @ts-expect-error an unknown scope is not an access rule
const unknownScope: RouteRow = { ...base, access: { scope: 'admin' } };
// @ts-expect-error an unknown role is not an access rule
const unknownRole: AccessRule = { scope: 'board', via: 'card', role: 'viewer' };
const complete: RouteRow = { ...base, access: { scope: 'user' } };

/** Never run: tsc checks that a row cannot be served through the other wrapper. */
const neverRun = false as boolean;
if (neverRun) {
  // @ts-expect-error a public row is served by publicRoute(), not by route()
  route(health, async () => ({ status: 200 }));
  // @ts-expect-error a token-protected row cannot be served without its token step
  publicRoute(cardsGet, async () => ({ status: 200 }));
}

describe('the route table: deny by default', () => {
  it('rejects incomplete rows at compile time (the @ts-expect-error lines above are checked by tsc)', () => {
    // At run time the incomplete rows exist; the runtime shape check catches them as well.
    for (const row of [withoutAccess, emptyAccess, boardWithoutRole, unknownScope]) {
      expect(v.safeParse(knownAccessRule, row.access).success).toBe(false);
    }
    expect(v.safeParse(knownAccessRule, unknownRole).success).toBe(false);
    expect(v.safeParse(knownAccessRule, complete.access).success).toBe(true);
  });

  it.each(rows)('%s declares an access rule of a known shape', (_id, row) => {
    expect(Object.hasOwn(row, 'access')).toBe(true);
    const parsed = v.safeParse(knownAccessRule, row.access);
    expect(parsed.issues?.map((issue) => issue.message) ?? []).toEqual([]);
  });

  it('has exactly the agreed public rows; every other row requires a token', () => {
    const publicRows = rows.filter(([, row]) => row.access.scope === 'public').map(([id]) => id);
    expect(publicRows.sort()).toEqual(PUBLIC_ROWS);
    expect(rows.length).toBeGreaterThan(PUBLIC_ROWS.length);
  });

  it.each(rows.filter(([, row]) => row.access.scope === 'board'))(
    '%s (a board rule) takes the addressed id as a UUID path parameter {id}',
    (_id, row) => {
      expect(row.path).toMatch(/\{id\}/);
      expect(row.params).toBeDefined();
      const id = '0b6f2e1c-4a7d-4a8e-9c1b-2f3e4d5c6b7a';
      const params = Object.fromEntries([...row.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => [name!, id]));
      expect(v.safeParse(row.params!(), params).success).toBe(true);
      expect(v.safeParse(row.params!(), { ...params, id: 'not-a-uuid' }).success).toBe(false);
    },
  );

  it.each(rows.filter(([, row]) => row.access.scope === 'board' && row.access.role === 'owner'))(
    "%s (owners only) is a board-addressed route (owner rules are checked against the addressed board, or a webhook's own)",
    (_id, row) => {
      expect(row.access).toMatchObject({ scope: 'board', via: expect.stringMatching(/^(?:board|webhook)$/) });
    },
  );

  it.each(rows)(
    '%s: throttled at the identity rate exactly when its handler calls Cognito (whose quotas are low)',
    (_id, row) => {
      // lib/auth/accounts.ts is the account routes' work, every function of which calls Cognito.
      const callsCognito = /from '\.\.\/\.\.\/lib\/auth\/(cognito|accounts)'/.test(readFileSync(join(ROOT, row.entry), 'utf8'));
      expect({ callsCognito, throttle: row.throttle }).toEqual({ callsCognito, throttle: callsCognito ? 'identity' : undefined });
    },
  );

  it.each(rows)(
    '%s: its handler is route() (publicRoute() if public) with its own row, so its own access rule applies',
    async (_id, row) => {
      const source = readFileSync(join(ROOT, row.entry), 'utf8');
      const wired = [...source.matchAll(/export const handler = (route|publicRoute|credentialRoute)(?:<[^>]*>)?\(\s*(\w+)/g)];
      expect(wired).toHaveLength(1);
      const [, wrapper, name] = wired[0]!;
      // Public rows go through publicRoute(), which has no token step (credentialRoute() if they take
      // credentials: it counts them per address); every other row through route().
      expect(wrapper).toBe(row.access.scope !== 'public' ? 'route' : rateLimitOf(row) ? 'credentialRoute' : 'publicRoute');
      expect(await importedRow(source, row.entry, name!)).toBe(row);
      // Exactly one export, no second hand-rolled handler beside it.
      expect(source.match(/export /g)).toHaveLength(1);
    },
  );
});

/** The row a handler source imports from lib/rows under `name` (as written, or as an alias). */
async function importedRow(source: string, entry: string, name: string): Promise<unknown> {
  for (const [, names, from] of source.matchAll(/import \{([^}]*)\} from '([^']*\/lib\/rows\/[\w-]+)'/g)) {
    for (const specifier of names!.split(',').map((part) => part.trim())) {
      const [exported, local = exported] = specifier.split(/\s+as\s+/);
      if (local === name) return ((await import(join(ROOT, entry, '..', from!))) as Record<string, unknown>)[exported!];
    }
  }
  return undefined;
}

describe('the assembled table and the rows it is made of', () => {
  const tables = { routes, socketRoutes, streamConsumers, queueConsumers, schedules, poolTriggers };

  it.each(Object.entries(tables))("%s: every key is its row's own id (the name in logs and key fingerprints)", (_name, table) => {
    for (const [key, row] of Object.entries(table)) expect({ key, id: row.id }).toEqual({ key, id: key });
  });

  it('every function row has its own entry: one handler, one row', () => {
    const entries = Object.values(tables).flatMap((table) => Object.values(table).map((row) => row.entry));
    expect(new Set(entries).size).toBe(entries.length);
  });

  // Webhooks (infra/webhooks.ts): a row that sends to the deliveries queue is told its URL, one
  // that uses the secrets' key is told its id, and neither is told to a row that may not use it.
  it.each(Object.values(tables).flatMap((table) => Object.entries(table) as [string, FunctionRow][]))(
    '%s is told the webhook queue or key exactly when its row may use it',
    (_id, row) => {
      const env = row.env ?? [];
      expect(env.includes(ENV.webhookQueueUrl)).toBe((row.queue ?? []).length > 0);
      expect(env.includes(ENV.webhookKeyId)).toBe((row.key ?? []).length > 0);
    },
  );

  it.each(rows.filter(([, row]) => row.idempotent))(
    '%s honours an Idempotency-Key, so its role may PutItem (the key records are conditional PutItems)',
    (_id, row) => {
      expect(row.table).toContain('dynamodb:PutItem');
    },
  );

  it(`${SERVED_FILE} is current: the catch-all's paths and methods are the table's (run \`npm run openapi\` after changing a route)`, () => {
    expect(readFileSync(join(ROOT, SERVED_FILE), 'utf8')).toBe(servedText());
    const servedRows = rows.filter(([, row]) => row.path !== '$default');
    expect(Object.values(servedMethods).flat()).toHaveLength(servedRows.length);
  });

  // The one naming rule (CONTRIBUTING.md "Adding a route"): a row `cards.labels.attach` is an export
  // of lib/rows/cards.ts, and its handler is under functions/cards/ (a one-segment id such as
  // `health` may be functions/health.ts).
  it.each(Object.values(tables).flatMap((table) => Object.entries(table) as [string, FunctionRow][]))(
    '%s: its module and its handler are named after the first segment of its id',
    (id, row) => {
      const segment = id.split('.')[0]!;
      const module = join(ROOT, 'lib/rows', `${segment}.ts`);
      expect(existsSync(module) && readFileSync(module, 'utf8').includes(`  id: '${id}',\n`)).toBe(true);
      const handlerUnder = row.entry.startsWith(`functions/${segment}/`) || row.entry === `functions/${segment}.ts`;
      expect({ entry: row.entry, handlerUnder }).toEqual({ entry: row.entry, handlerUnder: true });
    },
  );

  it.each(Object.keys(routes).filter((id) => id !== 'fallback'))(
    '%s has its OpenAPI text: a description, and a documented status for each problem example',
    (id) => {
      const text = routeTexts[id as DocumentedRouteId];
      const row = routes[id as DocumentedRouteId] as RouteRow;
      expect(text.of).toBe(row);
      expect(text.description).toMatch(/^\S[\s\S]*\.$/);
      expect(text.description).not.toBe(row.summary);
      const documented = [row.success.status, ...errorStatuses(row)];
      for (const status of Object.keys(text.problems?.() ?? {})) expect(documented).toContain(Number(status));
      expect(Object.keys(text.query?.() ?? {}).sort()).toEqual(
        row.query ? Object.keys((row.query() as v.ObjectSchema<v.ObjectEntries, undefined>).entries).sort() : [],
      );
    },
  );

  it('no function and no run-time chain imports the assembled table (each imports its own row)', () => {
    const runtime = [
      'functions',
      'lib/http',
      'lib/socket',
      'lib/stream',
      'lib/queue',
      'lib/schedule',
      'lib/data',
      'lib/auth',
      'lib/contract',
    ];
    // The OpenAPI document describes every row: only the openapi function bundles the table.
    const documents = new Set(['lib/http/openapi.ts']);
    const importers = runtime
      .flatMap((dir) => sourcesUnder(dir))
      .filter((file) => !documents.has(file))
      .filter((file) => /from '(?:\.\.?\/)+(?:lib\/)?routes'/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(importers).toEqual([]);
  });
});

function sourcesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourcesUnder(`${dir}/${entry.name}`) : entry.name.endsWith('.ts') ? [`${dir}/${entry.name}`] : [],
  );
}

describe('the route table: every token-protected handler refuses a request without a token before any I/O', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  afterAll(() => ddb.restore());

  const protectedRows = rows.filter(([, row]) => row.access.scope !== 'public');

  it.each(protectedRows)('%s answers 401 problem+json to an event without Authorization', async (id, row) => {
    ddb.reset();
    const { handler } = (await import(join(ROOT, row.entry))) as {
      handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
    };
    const id0 = '0b6f2e1c-4a7d-4a8e-9c1b-2f3e4d5c6b7a';
    const names = [...row.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => name!);
    const path = row.path.replace(/\{[^}]+\}/g, id0);
    const event = {
      version: '2.0',
      routeKey: `${row.method} ${row.path}`,
      rawPath: path,
      rawQueryString: '',
      headers: row.body ? { 'content-type': 'application/json' } : {},
      pathParameters: names.length > 0 ? Object.fromEntries(names.map((name) => [name, id0])) : undefined,
      requestContext: { requestId: `unit-${id}`, http: { method: row.method, path } },
      body: row.body ? JSON.stringify({ title: 'x' }) : undefined,
      isBase64Encoded: false,
    } as unknown as APIGatewayProxyEventV2;
    const reply = await handler(event, {} as Context);
    expect(reply.statusCode).toBe(401);
    expect(reply.headers).toMatchObject({ 'content-type': 'application/problem+json', 'www-authenticate': 'Bearer' });
    expect(ddb.calls()).toHaveLength(0);
  });
});
