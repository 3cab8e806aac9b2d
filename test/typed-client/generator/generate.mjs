/**
 * `node generate.mjs <openapi.json> <schema.d.ts>`: the types openapi-typescript's Node API makes
 * of an OpenAPI document (`openapiTS(doc)` → AST → `astToString`), as a consumer would generate
 * them. It runs from this package so that openapi-typescript finds TypeScript 5's JS API here,
 * never the project's TypeScript 7 (which has none).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

const [input, output] = process.argv.slice(2);
if (!input || !output) throw new Error('usage: node generate.mjs <openapi.json> <schema.d.ts>');
const ast = await openapiTS(JSON.parse(readFileSync(input, 'utf8')));
writeFileSync(output, astToString(ast));
