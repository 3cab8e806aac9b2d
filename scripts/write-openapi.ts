import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../lib/http/openapi';
import { servedMethodsByPath } from '../lib/routes';

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

if (process.argv[1]?.endsWith('write-openapi.ts')) {
  writeFileSync('docs/openapi.json', openApiText());
  writeFileSync(SERVED_FILE, servedText());
}
