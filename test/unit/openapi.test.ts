import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import fc from 'fast-check';
import * as v from 'valibot';
import { KINDS } from '../../lib/contract/error-kinds';
import * as s from '../../lib/contract/schemas';
import type { ErrorKind } from '../../lib/domain/errors';
import { buildOpenApiDocument, documentedRows, errorStatuses, GATEWAY_STATUSES, serversFor } from '../../lib/http/openapi';
import { routes } from '../../lib/routes';
import { personalTokenScopeOf } from '../../lib/rows/row';
import { openApiText } from '../../scripts/write-openapi';

const document = buildOpenApiDocument();
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation: operation as any })),
);

/** A `$ref` to a component of the document, or the object itself. */
const resolve = (object: { $ref?: string }): any =>
  object.$ref
    ? object.$ref
        .slice(2)
        .split('/')
        .reduce((node: any, name) => node[name], document)
    : object;

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(document) as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('docs/openapi.json is the current document (run `npm run openapi` after changing a route or schema)', () => {
    expect(readFileSync(join(__dirname, '../../docs/openapi.json'), 'utf8')).toBe(openApiText());
  });

  it("gives each route's query parameters the bounds its own schema checks", () => {
    type Parameter = { name: string; schema: { minimum: number; maximum: number; default: number } };
    const limitOf = (path: string) =>
      ((document.paths as any)[path].get.parameters as Parameter[]).find((parameter) => parameter.name === 'limit')!.schema;
    expect(limitOf('/webhooks/{id}/deliveries')).toMatchObject({
      minimum: 1,
      maximum: s.MAX_DELIVERIES_PAGE,
      default: s.DEFAULT_DELIVERIES_PAGE,
    });
    expect(limitOf('/boards/{id}/events')).toMatchObject({
      minimum: 1,
      maximum: s.MAX_EVENTS_PAGE,
      default: s.DEFAULT_EVENTS_PAGE,
    });
    expect(s.MAX_DELIVERIES_PAGE).toBe(100);
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
    // A GET that honours If-None-Match also answers 304.
    const notModified = row.conditional === 'read' ? [304] : [];
    expect(statuses).toEqual([row.success.status, ...notModified, ...errorStatuses(row), ...GATEWAY_STATUSES].sort());
    // Token-protected operations inherit the bearer requirement, and add the personal token's
    // where a scope reaches them (that scope in x-required-scopes); public ones opt out.
    const scope = personalTokenScopeOf(row);
    expect({ security: operation.security, scopes: operation['x-required-scopes'] }).toEqual(
      row.access.scope === 'public'
        ? { security: [], scopes: undefined }
        : { security: scope ? [{ bearer: [] }, { personalToken: [] }] : undefined, scopes: scope ? [scope] : [] },
    );
  });

  it('documents path ids as UUIDs and request bodies from the validators', () => {
    const move = operations.find((o) => o.operation.operationId === 'cards.move')!.operation;
    expect(move.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
      { $ref: '#/components/parameters/IfMatch' },
    ]);
    expect(move.requestBody.content['application/json'].schema.required).toEqual(['target_column_id']);
  });

  it('names every resource schema once and refers to it by $ref wherever it appears', () => {
    const schemas = document.components.schemas as Record<string, any>;
    for (const name of [
      'Board',
      'BoardTree',
      'Column',
      'ColumnWithCards',
      'Card',
      'Member',
      'Label',
      'TokenResponse',
      'Problem',
      'Health',
      'TicketResponse',
    ]) {
      expect(schemas[name]).toEqual(expect.objectContaining({ type: 'object', description: expect.any(String) }));
    }
    expect(schemas.BoardTree.properties.columns.items).toEqual({ $ref: '#/components/schemas/ColumnWithCards' });
    expect(schemas.BoardTree.properties.labels.items).toEqual({ $ref: '#/components/schemas/Label' });
    expect(schemas.ColumnWithCards.properties.cards.items).toEqual({ $ref: '#/components/schemas/Card' });
    const json = (id: string, status: number) =>
      operations.find((o) => o.operation.operationId === id)!.operation.responses[status].content['application/json'].schema;
    expect(json('boards.get', 200)).toEqual({ $ref: '#/components/schemas/BoardTree' });
    expect(json('boards.list', 200).items).toEqual({ $ref: '#/components/schemas/Board' });
    expect(json('members.list', 200).items).toEqual({ $ref: '#/components/schemas/Member' });
    // No resource is spelled out inline anywhere in the paths.
    expect(JSON.stringify(document.paths)).not.toContain('"owner_id"');
    expect(JSON.stringify(document.paths)).not.toContain('"label_ids"');
  });

  it('documents GET /openapi.json and GET /asyncapi.json as JSON objects', () => {
    for (const id of ['openapi', 'asyncapi']) {
      const ok = operations.find((o) => o.operation.operationId === id)!.operation.responses[200];
      // Typed for a generated client: its version field, info and its operations' map.
      expect(ok.content['application/json'].schema).toMatchObject({
        type: 'object',
        description: expect.any(String),
        required: [id, 'info', id === 'openapi' ? 'paths' : 'channels'],
      });
    }
  });

  it('Problem.code is exactly the kinds the service emits', () => {
    const code = (document.components.schemas as any).Problem.properties.code;
    const kinds: (ErrorKind | 'internal')[] = Object.keys(KINDS) as (keyof typeof KINDS)[];
    expect([...code.enum].sort()).toEqual([...kinds].sort());
    expect(kinds).toContain('internal');
  });

  it('every operation and path parameter has a description', () => {
    for (const { operation } of operations) {
      expect(operation.description).toEqual(expect.any(String));
      for (const parameter of operation.parameters ?? []) expect(resolve(parameter).description).toEqual(expect.any(String));
    }
  });

  it('titles and names carry the not-blank rule as a pattern, beside the well-formed one', () => {
    const title = (document.paths['/boards'] as any).post.requestBody.content['application/json'].schema.properties.title;
    expect(title.pattern).toBe('\\S');
    expect(title.allOf).toEqual([{ type: 'string', pattern: s.WELL_FORMED_PATTERN, maxLength: 256 }]);
    expect(title.maxLength).toBe(256);
  });

  it('every schema with a string keyword, a const or a value list states its type, and no list carries a pattern', () => {
    // Generators map one schema to one type: hey-api made `unknown` of a pattern-only allOf branch,
    // openapi-zod-client made `z.unknown()` of a type-less const and could not put a pattern on an
    // enum; swagger-parser 13 reported the server variables' descriptions (its schema's typo).
    const problems: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) {
        for (const [i, item] of node.entries()) walk(item, `${where}[${i}]`);
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Record<string, unknown>;
      const keyed = ['pattern', 'maxLength', 'minLength', 'const', 'enum'].filter((key) => key in schema);
      const isSchema = !where.endsWith('.examples') && !where.endsWith('.example') && !where.includes('.variables.');
      if (isSchema && keyed.length > 0 && typeof schema.type !== 'string') problems.push(`${where}: ${keyed} without a type`);
      if (isSchema && 'enum' in schema && 'pattern' in schema) problems.push(`${where}: a pattern beside an enum`);
      for (const [key, value] of Object.entries(schema))
        if (key !== 'example' && key !== 'examples') walk(value, `${where}.${key}`);
    };
    walk(document, '#');
    for (const server of document.servers ?? [])
      for (const [name, variable] of Object.entries((server as any).variables ?? {}))
        expect([name, Object.keys(variable as object)]).toEqual([name, ['default']]);
    expect(problems).toEqual([]);
  });

  it("the patterns give the validators' answers (JSON Schema patterns are ECMA-262, with or without the u flag)", () => {
    const samples = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u2028', '\ufeff', '\u3000', 'a', '\ud800', '\udc00') }),
    );
    const blank = [new RegExp(s.NOT_BLANK_PATTERN), new RegExp(s.NOT_BLANK_PATTERN, 'u')];
    const wellFormed = [new RegExp(s.WELL_FORMED_PATTERN), new RegExp(s.WELL_FORMED_PATTERN, 'u')];
    fc.assert(
      fc.property(samples, (text) => {
        for (const pattern of blank) expect(pattern.test(text)).toBe(text.trim().length > 0);
        for (const pattern of wellFormed) expect(pattern.test(text)).toBe(text.isWellFormed());
        const valid = v.safeParse(s.titleBody(), { title: text }).success;
        expect(valid).toBe(text.trim().length > 0 && text.isWellFormed() && [...text].length <= 256);
      }),
      { numRuns: 2000 },
    );
  });

  it("documents the gateway's own 429 and 413 with the bodies it sends", () => {
    const components = document.components as any;
    expect(components.responses.TooManyRequests.content['application/json'].example).toEqual({ message: 'Too Many Requests' });
    const create = operations.find((o) => o.operation.operationId === 'boards.create')!.operation;
    expect(Object.keys(create.responses[413].content).sort()).toEqual(['application/json', 'application/problem+json']);
    expect(create.responses[401].headers['WWW-Authenticate']).toEqual({ $ref: '#/components/headers/WWW-Authenticate' });
    expect(components.headers['WWW-Authenticate']).toMatchObject({
      required: true,
      schema: { enum: ['Bearer', 'Bearer error="invalid_token"'] },
    });
    expect(create.responses[503].headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    expect(components.headers['Retry-After']).toMatchObject({ required: true, schema: { type: 'integer', minimum: 1 } });
  });
});

describe('servers of the served document', () => {
  const event = (domainName: string, proto = 'https') =>
    ({ headers: { 'x-forwarded-proto': proto }, requestContext: { domainName, apiId: 'abc123' } }) as any;

  it('names the origin the document was requested from, in the scheme the gateway received it on', () => {
    expect(serversFor(event('abc123.execute-api.eu-west-1.amazonaws.com'))[0]!.url).toBe(
      'https://abc123.execute-api.eu-west-1.amazonaws.com',
    );
    expect(serversFor(event('127.0.0.1:3000', 'http'))[0]!.url).toBe('http://127.0.0.1:3000');
    expect(serversFor(event('[::1]:3000', 'http'))[0]!.url).toBe('http://[::1]:3000');
  });

  it('says https unless the gateway said http (a missing or odd X-Forwarded-Proto is not a scheme)', () => {
    for (const proto of ['', 'javascript', 'HTTP, https', 'ftp']) {
      expect(serversFor(event('api.example.com', proto))[0]!.url).toBe('https://api.example.com');
    }
    expect(serversFor({ requestContext: { domainName: 'api.example.com' } } as any)[0]!.url).toBe('https://api.example.com');
  });

  it('falls back to the relative origin for a domain that is not a host', () => {
    for (const domain of ['', 'evil.example/path', 'a b', 'host:port', 'x"><script>']) {
      expect(serversFor(event(domain, 'http'))[0]!.url).toBe('/');
    }
  });
});

describe('Idempotency-Key in the document', () => {
  const idempotent = operations.filter(
    ({ operation }) => (routes as unknown as Record<string, { idempotent?: string }>)[operation.operationId]?.idempotent,
  );

  it('is a header parameter of exactly the POSTs that create something lasting (a socket ticket does not)', () => {
    expect(idempotent.map(({ operation }) => operation.operationId).sort()).toEqual(
      [
        'auth.register',
        'boards.batch',
        'boards.create',
        'cards.create',
        'columns.create',
        'comments.create',
        'labels.create',
        'members.add',
      ].sort(),
    );
    for (const { operation } of operations) {
      const names = (operation.parameters ?? []).map((p: { $ref?: string }) => resolve(p).name);
      expect(names.includes('Idempotency-Key')).toBe(idempotent.some((o) => o.operation === operation));
    }
  });

  it('documents the replay header, the reused key (422) and the key in use (409, Retry-After) on those operations', () => {
    for (const { operation } of idempotent) {
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1] as any;
      expect(success.headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/Idempotent-Replayed' });
      expect(operation.responses[422].content['application/problem+json'].example.code).toBe('idempotency_key_reused');
      expect(operation.responses[409].headers['Retry-After'].schema).toMatchObject({ type: 'integer', minimum: 1 });
      expect(operation.responses[409].description).toMatch(/idempotency_key_in_use/);
    }
  });
});
