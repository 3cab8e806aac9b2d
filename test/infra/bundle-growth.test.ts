import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { clientsInText } from '../../bench/bundles';
import { DEPLOYED_OPTIONS } from '../../bench/esbuild-options';
import { poolTriggers, queueConsumers, routes, schedules, socketRoutes, streamConsumers } from '../../lib/routes';

/**
 * Bundles that do not grow with the table: every function is bundled with the deployed
 * esbuild options twice, as the code is and with one more row added the way rows are added (its
 * own export in a module of lib/rows with its OpenAPI text beside it, a body schema of its own in
 * lib/contract/schemas.ts, its path in lib/rows/served.ts as `npm run openapi` writes it; the
 * assembled table picks the row up by itself). Only the
 * functions whose job is to know every row may change: the OpenAPI document, which describes the
 * new operation, and the catch-all, which must answer 405 on the new path. Every other bundle
 * keeps its size to the byte. Before lib/rows, each handler reached its row through the whole
 * table, and this failed for every function.
 */

const ROOT = join(__dirname, '..', '..');
const ADDED_PATH = '/boards/{id}/retire';

/** What adding a row writes into each module, as text appended or replaced in its source. */
const ADDITIONS: Record<string, (source: string) => string> = {
  'lib/contract/schemas.ts': (source) =>
    `${source}
export const retireBoardBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({ reason: v.pipe(title(), about('Why the board is retired (a row of the bundle-growth test only).', 'Done')) }),
);
`,
  'lib/rows/boards.ts': (source) =>
    `import { retireBoardBody } from '../contract/schemas';
${source}
export const boardsRetire = {
  id: 'boards.retire',
  method: 'POST',
  path: '${ADDED_PATH}',
  entry: 'functions/boards/retire.ts',
  summary: 'Archive a board (owners only)',
  access: { scope: 'board', via: 'board', role: 'owner' },
  params: idParams,
  body: retireBoardBody,
  success: { status: 200, schema: 'board' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
  errors: [409],
  metric: 'BoardArchived',
  cognito: [],
} satisfies RouteRow;

export const boardsRetireText = {
  of: boardsRetire,
  tag: 'boards',
  description: 'Archives the board: it stays readable, and changes to it are 409 until it is restored.',
} satisfies RouteText;
`,
  'lib/rows/served.ts': (source) => replaceOnce(source, '\n};\n', `\n  '${ADDED_PATH}': ['POST'],\n};\n`),
};

/** The rows of the service itself (lib/rows/health.ts, openapi.ts, asyncapi.ts, docs.ts, fallback.ts): liveness, the documents, the catch-all. */
const SERVICE_ROWS = ['health', 'openapi', 'asyncapi', 'docs', 'docs.file', 'fallback'];

/** The functions whose bundle must hold every row: they are expected to change, and to show the new path. */
const DESCRIBE_EVERY_ROW = ['fallback', 'openapi'];

function replaceOnce(source: string, search: string, replacement: string): string {
  const at = source.indexOf(search);
  // A pattern that no longer matches would add nothing and let the test pass without its row.
  if (at < 0 || source.indexOf(search, at + 1) >= 0) throw new Error(`expected exactly one ${JSON.stringify(search)}`);
  return source.slice(0, at) + replacement.replace('$&', search) + source.slice(at + search.length);
}

const withAddedRow: Plugin = {
  name: 'with-added-row',
  setup(builder) {
    const files = new Map(Object.keys(ADDITIONS).map((file) => [join(ROOT, file), file]));
    builder.onLoad({ filter: /\.ts$/ }, (args) => {
      const file = files.get(args.path);
      if (!file) return undefined;
      return { contents: ADDITIONS[file]!(readFileSync(args.path, 'utf8')), loader: 'ts' };
    });
  },
};

const functionRows = [
  ...Object.values(routes),
  ...Object.values(socketRoutes),
  ...Object.values(streamConsumers),
  ...Object.values(queueConsumers),
  ...Object.values(schedules),
  ...Object.values(poolTriggers),
];

/**
 * Every function's bundle, by row id, with the deployed options. One build of every entry point:
 * esbuild bundles each entry on its own (its own tree-shaking, its own minified names), the same
 * bytes as a build of that entry alone, as CDK runs it, but it reads and parses the SDK once for
 * all of them instead of once a function.
 */
async function bundles(plugins: Plugin[]): Promise<Map<string, Uint8Array>> {
  const outdir = join(ROOT, 'cdk.out', 'bundle-growth');
  const result = await build({
    ...DEPLOYED_OPTIONS,
    entryPoints: functionRows.map((row) => ({ in: join(ROOT, row.entry), out: row.id })),
    outdir,
    write: false,
    plugins,
  });
  const byPath = new Map(result.outputFiles.map((file) => [file.path, file.contents]));
  return new Map(functionRows.map((row) => [row.id, byPath.get(join(outdir, `${row.id}.js`))!]));
}

let before: Map<string, Uint8Array>;
let after: Map<string, Uint8Array>;

beforeAll(async () => {
  before = await bundles([]);
  after = await bundles([withAddedRow]);
  // Two builds of every function: well past jest's default on a busy two-core machine.
}, 600_000);

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describe('adding a row to the table', () => {
  it('changes the size of no bundle but the OpenAPI document and the catch-all, not even by a byte', () => {
    // Sizes, not bytes: esbuild picks the letters of minified names by the character frequency of
    // the input text it read (evanw/esbuild#543), dropped code included, so a bundle whose modules
    // gained an unused export may spell its names with other letters of the same lengths.
    const changed = Object.fromEntries(
      functionRows
        .filter((row) => before.get(row.id)!.length !== after.get(row.id)!.length)
        .map((row) => [row.id, `${before.get(row.id)!.length} → ${after.get(row.id)!.length} bytes`]),
    );
    expect(changed).toEqual(Object.fromEntries(DESCRIBE_EVERY_ROW.map((id) => [id, expect.any(String)])));
  });

  it.each(DESCRIBE_EVERY_ROW)('reaches %s, whose bundle then names the new path (the added row is really there)', (id) => {
    expect(text(before.get(id)!)).not.toContain(ADDED_PATH);
    expect(text(after.get(id)!)).toContain(ADDED_PATH);
  });

  it.each(functionRows.filter((row) => !SERVICE_ROWS.includes(row.id)).map((row) => row.id))(
    '%s holds no other row: not even the names of the documents the service rows serve',
    (id) => {
      const bundle = text(before.get(id)!);
      expect(['AsyncAPI', 'Swagger', 'openapi.json'].filter((name) => bundle.includes(name))).toEqual([]);
    },
  );
});

/**
 * A bundle carries the SDK client of a service only where its row is granted that service: the
 * KMS client costs a route that never seals or opens a secret its share of the cold import (the
 * webhook routes other than create and rotate-secret carried it until their storage module was
 * split), and a client without a grant could only ever fail with AccessDenied.
 */
describe('the SDK clients in each bundle', () => {
  const granted = (row: (typeof functionRows)[number]) => {
    const grants = row as { key?: unknown[]; queue?: unknown[]; manageConnections?: boolean };
    return {
      kms: (grants.key?.length ?? 0) > 0,
      sqs: (grants.queue?.length ?? 0) > 0,
      connections: grants.manageConnections === true,
    };
  };

  it.each(functionRows.map((row) => row.id))(
    '%s bundles the KMS, SQS and connections clients exactly where its row grants them',
    (id) => {
      const row = functionRows.find((r) => r.id === id)!;
      const found = clientsInText(text(before.get(id)!));
      const bundled = { kms: found.includes('kms'), sqs: found.includes('sqs'), connections: found.includes('connections') };
      expect(bundled).toEqual(granted(row));
    },
  );
});
