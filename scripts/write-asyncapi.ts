import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { answerArguments } from './cli';

/**
 * `npm run asyncapi`: docs/asyncapi.yaml (the source, written by hand) as docs/asyncapi.json, the
 * form the service serves at GET /asyncapi.json (functions/asyncapi.ts bundles it);
 * test/unit/asyncapi.test.ts fails when the JSON is stale.
 */
// Resolved from this file, not the working directory: the test runner's workers share one process
// across test files, and nothing may make this read depend on where it was started.
const SOURCE = fileURLToPath(new URL('../docs/asyncapi.yaml', import.meta.url));
export const asyncApiText = () => `${JSON.stringify(parse(readFileSync(SOURCE, 'utf8')), null, 2)}\n`;

const USAGE = `usage: npm run asyncapi

Writes docs/asyncapi.json from docs/asyncapi.yaml (the live events protocol, written by hand): the
form GET /asyncapi.json serves. test/unit/asyncapi.test.ts fails while the JSON is stale.

  -h, --help   this text`;

if (process.argv[1]?.endsWith('write-asyncapi.ts')) {
  answerArguments(USAGE);
  writeFileSync('docs/asyncapi.json', asyncApiText());
}
