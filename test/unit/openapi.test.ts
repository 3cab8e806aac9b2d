import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApiDocument, documentedRows, errorStatuses } from '../../lib/http/openapi';
import { routes } from '../../lib/routes';
import { openApiText } from '../../scripts/write-openapi';

const document = buildOpenApiDocument();
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation: operation as any })),
);

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(document) as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('docs/openapi.json is the current document (run `npm run openapi` after changing a route or schema)', () => {
    expect(readFileSync(join(__dirname, '../../docs/openapi.json'), 'utf8')).toBe(openApiText());
  });

  it('documents every route row except the catch-all, and nothing else', () => {
    const documented = operations.map((o) => `${o.method} ${o.path}`).sort();
    const expected = Object.values(routes)
      .filter((row) => row.method !== 'ANY')
      .map((row) => `${row.method} ${row.path}`)
      .sort();
    expect(documented).toEqual(expected);
  });

  it.each(documentedRows())('%s documents its success status and exactly its derived error statuses', (id, row) => {
    const operation = operations.find((o) => o.operation.operationId === id)!.operation;
    const statuses = Object.keys(operation.responses).map(Number).sort();
    expect(statuses).toEqual([row.success.status, ...errorStatuses(row)].sort());
    // Token-protected operations inherit the bearer requirement; public ones opt out.
    expect(operation.security).toEqual(row.access.scope === 'public' ? [] : undefined);
  });

  it('documents path ids as UUIDs and request bodies from the validators', () => {
    const move = operations.find((o) => o.operation.operationId === 'cards.move')!.operation;
    expect(move.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    expect(move.requestBody.content['application/json'].schema.required).toEqual(['target_column_id']);
  });
});
