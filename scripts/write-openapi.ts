import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../lib/http/openapi';
import { servedMethodsByPath } from '../lib/routes';
import { answerArguments } from './cli';

/**
 * `npm run openapi`: writes docs/openapi.json, and lib/rows/served.ts (the served paths and their
 * methods, all the catch-all function needs of the table); test/unit/openapi.test.ts and
 * test/unit/route-table.test.ts fail when either is stale.
 */
export const openApiText = () => `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

export const SERVED_FILE = 'lib/rows/served.ts';

/** lib/rows/served.ts as `npm run openapi` writes it, formatted as Biome would. */
export const servedText = () =>
  [
    '// Written by `npm run openapi` (scripts/write-openapi.ts) from the route table (lib/routes.ts); do not edit.',
    '',
    '/**',
    ' * Each path the HTTP rows serve, with its methods: all the catch-all (functions/fallback.ts) needs',
    ' * of the table to tell 405 from 404, without the rows and their schemas in its bundle.',
    ' */',
    'export const servedMethods: Record<string, readonly string[]> = {',
    ...Object.entries(servedMethodsByPath()).map(
      ([path, methods]) => `  '${path}': [${methods.map((method) => `'${method}'`).join(', ')}],`,
    ),
    '};',
    '',
  ].join('\n');

const USAGE = `usage: npm run openapi

Writes docs/openapi.json (the OpenAPI 3.1 document, made from the route table and the valibot
schemas that validate requests) and lib/rows/served.ts (each served path with its methods, for the
catch-all function). Run it after changing a route or a schema; test/unit/openapi.test.ts and
test/unit/route-table.test.ts fail while either file is stale.

  -h, --help   this text`;

if (process.argv[1]?.endsWith('write-openapi.ts')) {
  answerArguments(USAGE);
  writeFileSync('docs/openapi.json', openApiText());
  writeFileSync(SERVED_FILE, servedText());
}
