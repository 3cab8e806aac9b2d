import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * `npm run asyncapi`: docs/asyncapi.yaml (the source, written by hand) as docs/asyncapi.json, the
 * form the service serves at GET /asyncapi.json (functions/asyncapi.ts bundles it);
 * test/unit/asyncapi.test.ts fails when the JSON is stale.
 */
export const asyncApiText = () => `${JSON.stringify(parse(readFileSync('docs/asyncapi.yaml', 'utf8')), null, 2)}\n`;

if (process.argv[1]?.endsWith('write-asyncapi.ts')) writeFileSync('docs/asyncapi.json', asyncApiText());
