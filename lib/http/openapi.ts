import { toJsonSchema } from '@valibot/to-json-schema';
import { type RouteRow, routes } from '../routes';
import { documentedKeywordsOf, type Lazy, problem } from './schemas';

/**
 * OpenAPI 3.1 document made from the route table and the very schemas the validators use: a
 * route cannot be served without being documented, nor documented differently from how it is
 * validated. Error statuses are derived from what produces them (access rule, params, body) plus
 * the row's own `errors`.
 */
const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request: invalid JSON, a missing or ill-typed field, a limit broken, or an id that is not a UUID',
  401: 'Missing, malformed, invalid or expired access token (WWW-Authenticate: Bearer)',
  403: 'Not a member of the board (or not an owner where owners are required)',
  404: 'The addressed resource, or one named in the body, does not exist',
  409: 'Conflict with the current state (see detail)',
  413: 'Request body larger than 64 KiB',
  415: 'Request body sent with a Content-Type that is not JSON',
  500: 'Unexpected failure; nothing internal is disclosed',
  503: 'Storage or identity provider throttled or unavailable; retry after Retry-After seconds',
};

export function errorStatuses(row: RouteRow): number[] {
  const statuses = new Set<number>([500, ...(row.errors ?? [])]);
  if (row.params || row.body) statuses.add(400);
  if (row.body) for (const status of [413, 415]) statuses.add(status);
  if (row.access.scope !== 'public') statuses.add(401);
  if (row.access.scope === 'board') for (const status of [403, 404]) statuses.add(status);
  if (row.access.scope !== 'public' || row.table.length > 0 || row.cognito.length > 0) statuses.add(503);
  return [...statuses].sort();
}

const schemaOf = (schema: Lazy, io: 'input' | 'output') => {
  const { $schema: _ignored, ...json } = toJsonSchema(schema(), {
    target: 'draft-2020-12',
    typeMode: io,
    // Length limits are custom checks (they count characters) and the email pattern is a regex,
    // each with its JSON Schema keywords attached; the other checks (well-formed Unicode, not
    // blank) have no JSON Schema form and are left out rather than failing the conversion.
    overrideAction: ({ valibotAction, jsonSchema }) => {
      const keywords = documentedKeywordsOf(valibotAction);
      return keywords || valibotAction.type === 'check' ? { ...jsonSchema, ...keywords } : undefined;
    },
  }) as Record<string, unknown>;
  return json;
};

export function documentedRows(): [string, RouteRow][] {
  return (Object.entries(routes) as [string, RouteRow][]).filter(([, row]) => row.method !== 'ANY');
}

export function buildOpenApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [id, row] of documentedRows()) {
    const params = row.params ? (schemaOf(row.params, 'input') as { properties: Record<string, unknown> }) : undefined;
    const responses: Record<string, unknown> = {
      [row.success.status]: row.success.schema
        ? { description: 'Success', content: { 'application/json': { schema: schemaOf(row.success.schema, 'output') } } }
        : { description: 'Success, no content' },
    };
    for (const status of errorStatuses(row)) {
      responses[status] = {
        description: STATUS_TEXT[status],
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    }
    paths[row.path] ??= {};
    paths[row.path]![row.method.toLowerCase()] = {
      operationId: id,
      summary: row.summary,
      tags: [id.split('.')[0]],
      ...(row.access.scope === 'public' ? { security: [] } : {}),
      ...(params
        ? {
            parameters: Object.entries(params.properties).map(([name, schema]) => ({ name, in: 'path', required: true, schema })),
          }
        : {}),
      ...(row.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(row.body, 'input') } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'task-board',
      version: '1.0.0',
      description: 'Multi-user task-board (Kanban) REST service. Errors are RFC 9457 problem+json.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'Cognito access token from /auth/register or /auth/login',
        },
      },
      schemas: { Problem: schemaOf(problem, 'output') },
    },
  };
}
