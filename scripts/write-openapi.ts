import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../lib/http/openapi';

/** `npm run openapi`: writes docs/openapi.json; test/unit/openapi.test.ts fails when it is stale. */
export const openApiText = () => `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (process.argv[1]?.endsWith('write-openapi.ts')) writeFileSync('docs/openapi.json', openApiText());
