import { type ConversionConfig, type JsonSchema, toJsonSchema, toJsonSchemaDefs } from '@valibot/to-json-schema';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { GenericSchema } from 'valibot';
import { version } from '../../package.json';
import { KINDS } from '../contract/error-kinds';
import * as s from '../contract/schemas';
import { documentedKeywordsOf, type Lazy } from '../contract/schemas';
import { IdempotencyKeyInUse, IdempotencyKeyReused, InsufficientScope, PreconditionFailed } from '../domain/errors';
import { type DocumentedRouteId, isCatchAll, type RouteRow, routes, routeTexts } from '../routes';
import { createsBoard, personalTokenScopeOf, type RateLimitPolicy, rateLimitOf } from '../rows/row';
import { type ProblemExample, type RouteText, TAGS } from '../rows/text';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './parse';

/**
 * OpenAPI 3.1 document made from the route table and the very schemas the validators use: a
 * route cannot be served without being documented, nor documented differently from how it is
 * validated. Error statuses are derived from what produces them (access rule, params, body) plus
 * the row's own `errors`; API Gateway's own answers (429, and 413 past its 10 MB limit) are added
 * to every operation, with the bodies the gateway really sends.
 */
const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request: invalid JSON or UTF-8, a missing or ill-typed field, a limit broken, or an id that is not a UUID',
  401: 'Missing, malformed, invalid or expired access token (see `WWW-Authenticate`)',
  403: 'Not a member of the board (or not an owner where owners are required); also for a board id that does not exist',
  404: 'The addressed resource, or one named in the body, does not exist',
  409: 'Conflict with the current state (see `detail`)',
  413: 'Request body larger than 64 KiB: a problem from the service; larger than 10 MB: API Gateway\'s own `{"message": "Request Entity Too Large"}`',
  415: 'Request body sent with a Content-Type that is not JSON, or JSON declared in a charset other than UTF-8',
  412: 'The card changed since the `If-Match` tags were read (`code` `precondition_failed`): nothing was written. `ETag` is its current tag: read it again, reapply the change and retry with that tag',
  410: 'The first event after `after` is no longer kept (`resync_required`): read the board again and go on from its `seq`',
  422: 'The answer would be larger than a Lambda function can send (6 MB); the problem says how to read it in parts',
  500: 'Unexpected failure; nothing internal is disclosed',
  503: 'Storage or identity provider throttled or unavailable; retry after `Retry-After` seconds',
};

/** A plausible `detail` for each documented error status, for the problem examples. */
const EXAMPLE_DETAIL: Record<number, string> = {
  400: 'Invalid request body: body.title must contain a non-whitespace character',
  401: 'The access token is invalid or has expired.',
  403: 'You are not allowed to do this on this board.',
  404: 'Card was not found.',
  409: 'This user is already a member of the board.',
  413: 'The request body is larger than 65536 bytes.',
  415: 'Content-Type "text/plain" is not supported; send application/json.',
  422: 'The answer is larger than the service can send in one response.',
  500: 'Something went wrong on our side. It has been logged; retry later.',
  410: 'The events after seq 41 are no longer kept (events are kept 604800 seconds): read the board again with GET /boards/{id} and go on from its seq.',
  503: 'The database is busy; retry shortly.',
  412: new PreconditionFailed('"x"').detail,
};

/** The statuses the service itself may answer an operation with, besides its success. */
export function errorStatuses(row: RouteRow): number[] {
  const statuses = new Set<number>([500, ...(row.errors ?? [])]);
  // Any body sent is checked (lib/http/parse.ts): too large, not JSON, not a JSON object.
  for (const status of [400, 413, 415]) statuses.add(status);
  if (row.access.scope !== 'public') statuses.add(401);
  // A personal access token outside its scopes (`insufficient_scope`), on every token route.
  if (row.access.scope !== 'public') statuses.add(403);
  if (row.access.scope === 'board') for (const status of [403, 404]) statuses.add(status);
  if (row.access.scope !== 'public' || row.table.length > 0 || row.cognito.length > 0) statuses.add(503);
  if (row.idempotent) for (const status of [409, 422]) statuses.add(status);
  // A write of a card under If-Match whose tags are no longer the card's (lib/data/etags.ts).
  if (row.conditional === 'write') statuses.add(412);
  // A registration retried under its key logs in again: with another password, that is refused.
  if (row.idempotent === 'account') statuses.add(401);
  return [...statuses].sort();
}

/** Statuses API Gateway answers by itself, before the function runs: throttling, on every route. */
export const GATEWAY_STATUSES = [429];

/** The response schemas published as named components, referenced wherever they appear. */
const COMPONENTS = {
  Board: s.board,
  BoardTree: s.boardTree,
  Column: s.column,
  ColumnWithCards: s.columnWithCards,
  Card: s.card,
  Label: s.label,
  Member: s.member,
  Account: s.account,
  TokenResponse: s.tokenResponse,
  TicketResponse: s.ticketResponse,
  Health: s.health,
  Problem: s.problem,
} satisfies Record<string, Lazy>;

/**
 * Several JSON Schema patterns on one string: one as `pattern`, the others under `allOf`. Each
 * branch is a whole string schema with the string's limit: generators map one schema to one type
 * (hey-api typed a pattern-only branch `unknown`), and OWASP's rules want a limit on every string.
 */
function withKeywords(jsonSchema: JsonSchema, keywords: Record<string, unknown>): JsonSchema {
  const { pattern, ...rest } = keywords;
  const merged: JsonSchema = { ...jsonSchema, ...rest };
  const branch = (extra: string) => ({ type: 'string' as const, pattern: extra });
  if (typeof pattern === 'string') {
    if (merged.pattern === undefined || merged.pattern === pattern) merged.pattern = pattern;
    else if (merged.pattern === s.WELL_FORMED_PATTERN) {
      // The rule a reader cares about (not blank, a UUID, …) is the one shown as `pattern`.
      merged.allOf = [...(merged.allOf ?? []), branch(merged.pattern)];
      merged.pattern = pattern;
    } else merged.allOf = [...(merged.allOf ?? []), branch(pattern)];
  }
  if (merged.allOf && merged.maxLength !== undefined) {
    merged.allOf = merged.allOf.map((extra) => ({ ...(extra as object), maxLength: merged.maxLength }));
  }
  return merged;
}

/**
 * A parameter that lists its values needs no pattern or length beside them (the validator keeps
 * its own, to tell 400 from 404), and zod generators cannot put a pattern on an enum.
 */
function enumOnly(schema: JsonSchema): JsonSchema {
  if (schema.enum === undefined) return schema;
  const { pattern: _pattern, maxLength: _maxLength, ...rest } = schema;
  return rest;
}

/**
 * A literal is a `const` with no `type`: generators that map one schema to one type
 * (openapi-zod-client) made it `unknown`, so it states its type.
 */
function typedLiteral(valibotType: string, jsonSchema: JsonSchema): JsonSchema | undefined {
  return valibotType === 'literal' && typeof jsonSchema.const === 'string' ? { type: 'string', ...jsonSchema } : undefined;
}

function conversion(io: 'input' | 'output', definitions?: Record<string, GenericSchema>): ConversionConfig {
  return {
    target: 'draft-2020-12',
    typeMode: io,
    ...(definitions ? { definitions } : {}),
    overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
    overrideSchema: ({ valibotSchema, jsonSchema }) => typedLiteral(valibotSchema.type, jsonSchema),
    // Length limits are custom checks (they count characters), not-blank and well-formed are
    // checks with a pattern attached, and the email pattern is a regex with its format: each has
    // its JSON Schema keywords attached where it is defined (lib/contract/schemas.ts).
    overrideAction: ({ valibotAction, jsonSchema }) => {
      const keywords = documentedKeywordsOf(valibotAction);
      return keywords || valibotAction.type === 'check' ? withKeywords(jsonSchema, keywords ?? {}) : undefined;
    },
  };
}

type Json = Record<string, unknown>;

function componentSchemas(): Record<string, JsonSchema> {
  const definitions = Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, schema()]));
  return toJsonSchemaDefs(definitions, conversion('output'));
}

/** A response schema, with every component it contains (or is) as a `$ref`. */
function responseSchema(schema: Lazy): Json {
  const definitions = Object.fromEntries(Object.entries(COMPONENTS).map(([name, component]) => [name, component()]));
  const { $schema: _schema, $defs: _defs, ...json } = toJsonSchema(schema(), conversion('output', definitions));
  return json;
}

function requestSchema(schema: Lazy): Json {
  const { $schema: _schema, ...json } = toJsonSchema(schema(), conversion('input'));
  return json;
}

export function documentedRows(): [DocumentedRouteId, RouteRow][] {
  return (Object.entries(routes) as [DocumentedRouteId, RouteRow][]).filter(([, row]) => !isCatchAll(row));
}

const PATH_PARAMETER_TEXT: Record<string, (row: RouteRow) => string> = {
  id: (row) => `The ${row.access.scope === 'board' ? row.access.via : 'resource'} id: a UUID, any case.`,
  user_id: () => "The member's user id (Cognito `sub`): a UUID, any case.",
  label_id: () => "The label's id (a label of the card's board): a UUID, any case.",
  file: () => 'The file name, one of those listed: another name is 404, one with characters no file name has 400.',
};

/** Path parameters that are not UUIDs have their own example. */
const PATH_PARAMETER_EXAMPLE: Record<string, string> = { file: 'swagger-ui.css' };

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const problemContent = (status: number, example?: ProblemExample) => ({
  schema: { $ref: '#/components/schemas/Problem' },
  example: {
    type: 'about:blank',
    title: Object.values(KINDS).find((kind) => kind.status === status)!.title,
    status,
    detail: example?.detail ?? EXAMPLE_DETAIL[status],
    code: example?.code ?? Object.entries(KINDS).find(([, kind]) => kind.status === status)![0],
    instance: 'urn:request:Jx1mYh3YoAMEb2Q=',
    ...example?.extra,
  },
});

/** The Idempotency-Key answers of the rows that honour one (lib/http/idempotency.ts). */
const IDEMPOTENCY_ERRORS: Record<number, { code: keyof typeof KINDS; detail: string; description: string }> = {
  409: {
    code: 'idempotency_key_in_use',
    detail: new IdempotencyKeyInUse(1).detail,
    description:
      'A request with this `Idempotency-Key` is still in progress (`code` `idempotency_key_in_use`): retry after `Retry-After` seconds to get its answer',
  },
  422: {
    code: 'idempotency_key_reused',
    detail: new IdempotencyKeyReused().detail,
    description:
      'This `Idempotency-Key` was already used, within 24 hours, for a different request: another body, path or operation (`code` `idempotency_key_reused`)',
  },
};

function errorResponse(status: number, row: RouteRow, text: RouteText): Json {
  const headers: Json = { 'Access-Control-Allow-Origin': header('Access-Control-Allow-Origin') };
  if (status === 401) headers['WWW-Authenticate'] = header('WWW-Authenticate');
  if (status === 403 && row.access.scope !== 'public') headers['WWW-Authenticate'] = insufficientScopeHeader(row);
  if (status === 503) headers['Retry-After'] = header('Retry-After');
  if (status === 412) headers.ETag = { ...header('ETag'), description: "The card's current entity tag." };
  const idempotency = row.idempotent ? IDEMPOTENCY_ERRORS[status] : undefined;
  if (idempotency && status === 409) {
    headers['Retry-After'] = {
      description:
        'With `code` `idempotency_key_in_use`: whole seconds to wait before retrying (1 or 2; the first request answers in milliseconds).',
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 3600, examples: [2] },
    };
  }
  const ownRule = (row.errors ?? []).includes(status);
  // A 403 that only a personal token can meet (no board, no rule of the route's own): its example is that.
  const scopeOnly = status === 403 && row.access.scope === 'user' && !ownRule;
  const example = scopeOnly
    ? { code: 'insufficient_scope' as const, detail: new InsufficientScope(personalTokenScopeOf(row)).detail }
    : undefined;
  const content: Json = {
    'application/problem+json': problemContent(
      status,
      idempotency && !ownRule ? idempotency : (text.problems?.()[status] ?? example),
    ),
  };
  if (status === 413) {
    content['application/json'] = {
      schema: { $ref: '#/components/schemas/GatewayMessage' },
      example: { message: 'Request Entity Too Large' },
    };
  }
  const description =
    status === 403 && row.access.scope !== 'public'
      ? scopeOnly
        ? INSUFFICIENT_SCOPE_TEXT
        : `${STATUS_TEXT[403]}; or: ${INSUFFICIENT_SCOPE_TEXT.toLowerCase()}`
      : status === 401 && row.access.scope === 'public'
        ? 'The credential in the body was refused: a wrong email or password (login, or a registration retried under its Idempotency-Key with another password), or a wrong, expired or revoked refresh token (refresh, logout)'
        : idempotency
          ? ownRule
            ? `${STATUS_TEXT[status]}; or: ${idempotency.description}`
            : idempotency.description
          : STATUS_TEXT[status];
  return { description, headers, content };
}

const INSUFFICIENT_SCOPE_TEXT =
  'A personal access token whose scopes do not allow this operation, or one that no personal token may call (`code` `insufficient_scope`, see `WWW-Authenticate`)';

/** RFC 6750's header of a 403 `insufficient_scope`: with the scope that would allow the operation, where one would. */
function insufficientScopeHeader(row: RouteRow): Json {
  const scope = personalTokenScopeOf(row);
  const value = scope ? `Bearer error="insufficient_scope", scope="${scope}"` : 'Bearer error="insufficient_scope"';
  return {
    description: `With \`code\` \`insufficient_scope\` only (a personal access token): \`${value}\`.${
      scope && createsBoard(row)
        ? ' A token limited to boards (`board_ids`) gets it without `scope`: it may not create boards.'
        : ''
    }`,
    schema: { type: 'string', enum: [...new Set([value, 'Bearer error="insufficient_scope"'])] },
  };
}

const RATE_LIMIT_TEXT: Record<RateLimitPolicy, string> = {
  user: 'the caller\'s quota (policy `"user"`: every request with a valid token, whichever token or function serves it)',
  address:
    'the quota of the client\'s address (policy `"address"`: the routes that take credentials, and requests whose token is missing or refused)',
};

/**
 * The 429 of a counted operation: the service's own (problem+json `rate_limited`, Retry-After, the
 * RateLimit fields) or, as on every route, API Gateway's throttling.
 */
function rateLimitedResponse(policy: RateLimitPolicy): Json {
  const user = policy === 'user';
  return {
    description:
      `Over ${RATE_LIMIT_TEXT[policy]} for the current fixed window (\`code\` \`rate_limited\`, \`r=0\`): the request did nothing; retry after \`Retry-After\` seconds, when the window resets. ` +
      (user ? 'A request whose token is refused counts against the address instead (and answers 401 within its quota). ' : '') +
      'Or API Gateway\'s own throttling (the stage\'s rate and burst limits: `application/json` `{"message": "Too Many Requests"}`, without these headers).',
    headers: {
      'Access-Control-Allow-Origin': header('Access-Control-Allow-Origin'),
      'Retry-After': {
        description: 'Whole seconds until the window resets: the same as `t` of `RateLimit`.',
        required: true,
        schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86400, examples: [42] },
      },
    },
    content: {
      'application/problem+json': {
        schema: { $ref: '#/components/schemas/RateLimitProblem' },
        example: {
          type: 'about:blank',
          title: 'Too Many Requests',
          status: 429,
          detail: `Too many requests from ${user ? 'your account: 600' : 'your address: 30'} per 60 s. Retry after 42 s.`,
          code: 'rate_limited',
          instance: 'urn:request:Jx1mYh3YoAMEb2Q=',
        },
      },
      'application/json': { schema: { $ref: '#/components/schemas/GatewayMessage' }, example: { message: 'Too Many Requests' } },
    },
  };
}

/** RateLimit-Policy and RateLimit on an answer of a counted operation. */
function withRateLimitFields(response: Json): void {
  if (typeof response !== 'object' || response === null || '$ref' in response) return;
  const answer = response as { headers?: Record<string, Json> };
  answer.headers = { ...answer.headers, 'RateLimit-Policy': header('RateLimit-Policy'), RateLimit: header('RateLimit') };
}

function successResponse(id: string, row: RouteRow): Json {
  const headers: Json = { 'Access-Control-Allow-Origin': header('Access-Control-Allow-Origin') };
  if (row.success.status === 204) return { description: 'Success, no content', headers };
  // A 202 without a schema (a code mailed) has no body either: not one of the two documents.
  if (!row.success.schema && id !== 'openapi' && id !== 'asyncapi') return { description: 'Accepted, no content', headers };
  headers.Vary = header('Vary');
  headers['Content-Encoding'] = header('Content-Encoding');
  if (id === 'docs' || id === 'docs.file') return docsResponse(id, headers);
  if (row.idempotent) headers['Idempotent-Replayed'] = header('Idempotent-Replayed');
  // Every answer that returns a card carries its tag, and so does the tree.
  if (row.success.schema === 'card' || row.conditional === 'read') headers.ETag = header('ETag');
  if (id === 'openapi' || id === 'asyncapi') headers['Cache-Control'] = header('Cache-Control');
  const schema = row.success.schema
    ? responseSchema(s.responseSchemas[row.success.schema])
    : id === 'openapi'
      ? describedDocument(
          'This OpenAPI 3.1 document (docs/openapi.json, with `servers` set to the origin it was requested from).',
          { openapi: { type: 'string', enum: ['3.1.0'] }, paths: { type: 'object' } },
        )
      : describedDocument(
          "The AsyncAPI 3 document of the live board events protocol (docs/asyncapi.yaml, as JSON), its server of this deployment's kind naming this deployment's socket address.",
          { asyncapi: { type: 'string', enum: ['3.0.0'] }, channels: { type: 'object' } },
        );
  return { description: 'Success', headers, content: { 'application/json': { schema } } };
}

/** The 304 of a GET that honours If-None-Match: no body, the tag it matched. */
const notModifiedResponse = (): Json => ({
  description:
    'Not modified: `If-None-Match` names the current entity tag (or is `*`): the body the client holds is current and is not sent again.',
  headers: { 'Access-Control-Allow-Origin': header('Access-Control-Allow-Origin'), ETag: header('ETag') },
});

/** `*` or a comma-separated list of entity tags (lib/http/conditional.ts), as a header parameter's schema. */
const ENTITY_TAGS_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 4096,
  pattern: '^\\s*(\\*|(W/)?"[^"\\s]*"(\\s*,\\s*((W/)?"[^"\\s]*")?)*)\\s*$',
};

/** The header parameters of conditional requests, by the row's kind. */
const CONDITIONAL_PARAMETERS = {
  read: [{ $ref: '#/components/parameters/IfNoneMatch' }],
  write: [{ $ref: '#/components/parameters/IfMatch' }],
} as const;

/**
 * A description document (this one, the AsyncAPI one) as a typed client sees it: its version
 * field, `info` and its operations' map are declared, the rest is open.
 */
function describedDocument(description: string, fields: Record<string, Json>): Json {
  const [versionField, operationsField] = Object.keys(fields) as [string, string];
  return {
    type: 'object',
    description,
    required: [versionField, 'info', operationsField],
    properties: {
      [versionField]: fields[versionField],
      info: {
        type: 'object',
        required: ['title', 'version'],
        properties: {
          title: { type: 'string', maxLength: 100, pattern: '^\\S' },
          version: { type: 'string', maxLength: 32, pattern: '^\\d+\\.\\d+\\.\\d+' },
        },
      },
      [operationsField]: fields[operationsField],
    },
  };
}

/** Not JSON: the reference page (HTML) and its files (lib/http/docs.ts), each with its own media type. */
function docsResponse(id: 'docs' | 'docs.file', headers: Json): Json {
  const nosniff = {
    description: 'Always `nosniff`: the content type is the one to use.',
    required: true,
    schema: { type: 'string', enum: ['nosniff'] },
  };
  if (id === 'docs') {
    return {
      description: 'The page',
      headers: {
        ...headers,
        'Cache-Control': header('Cache-Control'),
        'Content-Security-Policy': {
          description:
            "This origin's scripts and styles and the page's one inline script (by its hash); requests only to this origin; no framing.",
          required: true,
          schema: { type: 'string', maxLength: 1024, pattern: "^default-src 'none'; " },
        },
        'X-Content-Type-Options': nosniff,
      },
      content: {
        'text/html': {
          schema: { type: 'string', maxLength: 65536, pattern: '^<!doctype html>', description: 'The reference page.' },
        },
      },
    };
  }
  // A file's bytes, not a JSON value: described by its media type alone.
  const file = (mediaType: string, description: string) => ({ schema: { contentMediaType: mediaType, description } });
  return {
    description: 'The file, with the content type of its kind',
    headers: {
      ...headers,
      'Cache-Control': {
        description:
          "A year when the URL carries the renderer's version the function serves (`?v=`, as the page's URLs do); otherwise `no-cache`.",
        required: true,
        schema: { type: 'string', enum: ['public, max-age=31536000, immutable', 'no-cache'] },
      },
      'X-Content-Type-Options': nosniff,
    },
    content: {
      'text/javascript': file('text/javascript', '`swagger-ui-bundle.js`: the renderer.'),
      'text/css': file('text/css', '`swagger-ui.css`: its styles.'),
      'text/plain': file('text/plain', "`swagger-ui-bundle.js.LICENSE.txt`: the licences of the bundle's third-party code."),
      'image/png': file('image/png', '`favicon-32x32.png`: the page icon.'),
    },
  };
}

/** The deployed form of `servers`; the served document names the origin it was requested from instead. */
const DEPLOYED_SERVERS = [
  {
    url: 'https://{apiId}.execute-api.{region}.amazonaws.com',
    // The variables' own `description`s are valid 3.1, but swagger-parser's bundled schema (13.x)
    // spells the keyword `descriptions` and reports them: they are said here instead.
    description:
      'A deployed stage (dev or production): the stack output `ApiUrl`. `apiId` is the HTTP API id (the first label of `ApiUrl`), `region` the AWS region the stack is deployed to.',
    // The OWASP ruleset's API9 (inventory) asks every server to say whether it is internal: it is not.
    'x-internal': false,
    variables: {
      apiId: { default: 'abcdef1234' },
      region: { default: 'eu-west-1' },
    },
  },
];

/** A host name (or IPv4, or bracketed IPv6) with an optional port: what a `Host` header may be. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The served document names the origin it was requested from, so that "try it" calls the
 * deployment that served it. The domain is API Gateway's `requestContext.domainName` (the
 * execute-api or custom domain the request arrived on; the local server puts its Host header
 * there). The scheme is the `X-Forwarded-Proto` API Gateway sets (https: it serves nothing else;
 * a client's own X-Forwarded-* headers are folded into `Forwarded`, never passed on), which the
 * local server sets to http as it has no TLS. So no header the client controls decides it, and
 * nothing here asks which environment it runs in. No `Vary` is needed: caches key on the URL, of
 * which the origin is part.
 */
export function serversFor(event: APIGatewayProxyEventV2) {
  const domain = event.requestContext?.domainName ?? '';
  const scheme = event.headers?.['x-forwarded-proto'] === 'http' ? 'http' : 'https';
  // Its environment, for OWASP API9's inventory: only the local stack serves plain http.
  const description =
    scheme === 'http'
      ? 'The local stack (a local development environment) this document was requested from.'
      : 'The deployed stage (production or a development stage on AWS) this document was requested from.';
  if (!HOST.test(domain)) return [{ url: '/', description, 'x-internal': false }];
  return [{ url: `${scheme}://${domain}`, description, 'x-internal': false }];
}

/** The whole document: its metadata, then an operation per documented row, then what they share. */
export function buildOpenApiDocument() {
  return {
    openapi: '3.1.0',
    info: documentInfo(),
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: DEPLOYED_SERVERS,
    security: [{ bearer: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: documentPaths(),
    components: documentComponents(),
  };
}

function documentInfo() {
  return {
    title: 'task-board',
    // The one version of the service: package.json's.
    version,
    description:
      'Multi-user task-board (Kanban) REST service: boards hold ordered columns, columns hold ordered cards, and access is by board membership. ' +
      'Errors the service answers are RFC 9457 `application/problem+json`; API Gateway answers throttling (429) and bodies over 10 MB (413) itself, with `{"message": …}`. ' +
      "Fair use: every request with a token counts against its user's quota, and requests to the credential routes (or with a missing or refused token) against the client address's, per fixed window; every counted answer carries `RateLimit-Policy` and `RateLimit`, and one over the quota is 429 `rate_limited` with `Retry-After`. " +
      'Request bodies are JSON objects up to 64 KiB; fields not named are ignored. Ids are UUIDs (any case in, lower case out).',
    contact: { name: 'task-board maintainers' },
    license: { name: 'MIT', identifier: 'MIT' },
  };
}

/** Each documented row's operation, under its path and method, in the route table's order. */
function documentPaths(): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [id, row] of documentedRows()) {
    paths[row.path] ??= {};
    paths[row.path]![row.method.toLowerCase()] = operation(id, row, routeTexts[id]);
  }
  return paths;
}

function operation(id: DocumentedRouteId, row: RouteRow, text: RouteText): Json {
  const parameters = operationParameters(id, row, text);
  return {
    operationId: id,
    summary: row.summary,
    description: text.description,
    tags: [text.tag],
    ...(securityOf(row) ? { security: securityOf(row) } : {}),
    ...(row.access.scope !== 'public' ? { 'x-required-scopes': requiredScopesOf(row) } : {}),
    ...(parameters ? { parameters } : {}),
    ...(row.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: requestSchema(row.body) } } } }
      : {}),
    responses: operationResponses(id, row, text),
  };
}

type ObjectSchema = { properties: Record<string, Json> };

/** The path parameters, the Idempotency-Key header and the query parameters; none for a row that takes none. */
function operationParameters(id: DocumentedRouteId, row: RouteRow, text: RouteText): Json[] | undefined {
  const params = row.params ? (requestSchema(row.params) as ObjectSchema) : undefined;
  const query = row.query ? (requestSchema(row.query) as ObjectSchema) : undefined;
  if (!params && !query && !row.idempotent && !row.conditional) return undefined;
  return [
    ...Object.entries(params?.properties ?? {}).map(([name, schema]) => ({
      name,
      in: 'path',
      required: true,
      description: PATH_PARAMETER_TEXT[name]!(row),
      schema: enumOnly(schema as JsonSchema),
      example: PATH_PARAMETER_EXAMPLE[name] ?? '9b2f6c1e-4d3a-4f5b-8c7d-1e2f3a4b5c6d',
    })),
    ...(row.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
    ...(row.conditional ? CONDITIONAL_PARAMETERS[row.conditional] : []),
    ...Object.keys(query?.properties ?? {}).map((name) => {
      const parameter = text.query?.()[name];
      if (!parameter) throw new Error(`${id}: query parameter ${name} has no documentation`);
      return { name, in: 'query', required: false, ...parameter };
    }),
  ];
}

/** The success, every error status the service may answer, and the 429 (the service's own or the gateway's). */
function operationResponses(id: DocumentedRouteId, row: RouteRow, text: RouteText): Json {
  const responses: Json = { [row.success.status]: successResponse(id, row) };
  if (row.conditional === 'read') responses[304] = notModifiedResponse();
  for (const status of errorStatuses(row)) responses[status] = errorResponse(status, row, text);
  const policy = rateLimitOf(row);
  responses[429] = policy ? rateLimitedResponse(policy) : { $ref: '#/components/responses/TooManyRequests' };
  // Every answer of a counted operation says where its caller stands (docs/rate-limits.md).
  if (policy) for (const response of Object.values(responses) as Json[]) withRateLimitFields(response);
  return responses;
}

/** What the operations refer to by `$ref`: the token scheme, schemas, the Idempotency-Key, the gateway's 429, headers. */
function documentComponents() {
  return {
    securitySchemes: { bearer: bearerScheme(), personalToken: personalTokenScheme() },
    schemas: {
      ...componentSchemas(),
      GatewayMessage: gatewayMessageSchema(),
      RateLimitProblem: rateLimitProblemSchema(),
    },
    parameters: {
      IdempotencyKey: idempotencyKeyParameter(),
      IfNoneMatch: ifNoneMatchParameter(),
      IfMatch: ifMatchParameter(),
    },
    responses: { TooManyRequests: gatewayThrottledResponse() },
    headers: { ...answerHeaders(), ...rateLimitHeaders(), ...documentHeaders() },
  };
}

function bearerScheme() {
  return {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'The Cognito access token from `POST /auth/register` or `POST /auth/login`, sent as `Authorization: Bearer <token>`. ' +
      "Each function verifies it itself with aws-jwt-verify, following RFC8725 (JWT Best Current Practices): the signature against the user pool's JWKS " +
      "(Cognito signs RS256; the token's `alg` must be the key's, never `none`), the issuer (the pool), `client_id` (the app client), `token_use` = `access`, and expiry. " +
      'Missing: 401 with `WWW-Authenticate: Bearer`; rejected for any reason: 401 with `WWW-Authenticate: Bearer error="invalid_token"` and the same body.',
  };
}

/**
 * Who may call an operation: nobody needs a token on a public one; a session token every other
 * (the document's default); a personal token those its scopes reach, the scope in
 * `x-required-scopes` (a role list in the requirement itself is read as OAuth scopes by linters).
 */
function securityOf(row: RouteRow): Json[] | undefined {
  if (row.access.scope === 'public') return [];
  return personalTokenScopeOf(row) ? [{ bearer: [] }, { personalToken: [] }] : undefined;
}

/** The personal token scopes an operation needs: one, or none where no personal token may call it. */
const requiredScopesOf = (row: RouteRow): string[] => {
  const scope = personalTokenScopeOf(row);
  return scope ? [scope] : [];
};

function personalTokenScheme() {
  return {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'tbp_',
    description:
      'A personal access token from `POST /auth/tokens` (`tbp_…`), sent as `Authorization: Bearer <token>`: it acts as its user on the operations whose security names it, with the scope their `x-required-scopes` names ' +
      '(`boards:read`, `boards:write`, `webhooks:admin`), and only on the boards of its `board_ids` when set. Unknown, deleted, expired or mistyped: 401 as for a session token. ' +
      'Outside its scopes, or on an operation that does not list it: 403 `insufficient_scope` with `WWW-Authenticate: Bearer error="insufficient_scope"` (and `scope="…"` where a scope would allow it).',
  };
}

function gatewayMessageSchema() {
  return {
    type: 'object',
    description:
      "API Gateway's own answer, sent before any function runs: 429 when the stage's throttling limit is exceeded, 413 for a request body over 10 MB. Not a problem document.",
    required: ['message'],
    additionalProperties: false,
    properties: {
      message: { type: 'string', enum: ['Too Many Requests', 'Request Entity Too Large'] },
    },
  };
}

function rateLimitProblemSchema() {
  return {
    type: 'object',
    description: 'The RFC 9457 problem of a request over its rate-limit quota (`code` `rate_limited`): the request did nothing.',
    required: ['type', 'title', 'status', 'detail', 'code'],
    additionalProperties: false,
    properties: {
      type: {
        type: 'string',
        enum: ['about:blank'],
        description: 'Always `about:blank`: `code` and `status` say what happened.',
      },
      title: { type: 'string', enum: ['Too Many Requests'] },
      status: { type: 'integer', format: 'int32', minimum: 429, maximum: 429, enum: [429] },
      detail: {
        type: 'string',
        maxLength: 500,
        pattern: '\\S',
        description: 'The quota, its window and when to retry, in words.',
      },
      code: { type: 'string', enum: ['rate_limited'] },
      instance: {
        type: 'string',
        pattern: '^urn:request:\\S+$',
        maxLength: 200,
        description: 'The request id (`urn:request:<id>`), as in the logs.',
      },
    },
  };
}

function idempotencyKeyParameter() {
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes the POST safe to retry (IETF draft "The Idempotency-Key HTTP Header Field"): send a new unique value (a UUID) with each new request, and the same value when retrying it. ' +
      'Within 24 hours, the same key with the same request (operation, path and body, compared as JSON) answers what the first one answered, with `Idempotent-Replayed: true`, and creates nothing more; ' +
      'the same key with a different request is 422 (`idempotency_key_reused`); while the first is still running, 409 (`idempotency_key_in_use`) with `Retry-After`. ' +
      'A request that failed keeps nothing: its retry runs again. Keys belong to the caller (for registration, to the account it creates): other users cannot collide with them. ' +
      'A registration retried under its key creates nothing and logs in again: new tokens, the same account (its tokens are never stored; the password is checked again and is not part of the comparison). ' +
      `A Structured Field string (\`"..."\`) or the bare value, 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (space included); anything else is 400.`,
    schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH + 2, pattern: '^[\\x20-\\x7e]+$' },
    example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
  };
}

/** The 429 of an operation the service does not count: API Gateway's throttling alone. */
/** `If-None-Match` on the GETs that answer an entity tag. */
function ifNoneMatchParameter() {
  return {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description:
      'A cheap re-read (RFC 9110 §13.1.2): send the `ETag` of the body you hold (or several, comma-separated). When one of them is still current, or the value is `*`, the answer is 304 with that `ETag` and no body; otherwise the usual 200 with the new body and tag. ' +
      'A 304 for a board reads only the membership and the board item, nothing of its columns or cards. It is never answered for a state older than the last write that succeeded. ' +
      'Not `*` nor a comma-separated list of entity tags (`"…"` or `W/"…"`): 400 before anything is looked up.',
    schema: ENTITY_TAGS_SCHEMA,
    example: '"k3Jd9Q0aQ2mX1n8bT5s7Yw"',
  };
}

/** `If-Match` on the writes of a card. */
function ifMatchParameter() {
  return {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'An edit that must not overwrite another (RFC 9110 §13.1.1): send the card\'s `ETag` as you read it. The change goes ahead only if the card\'s current tag is listed (`*`: any existing card); a weak tag `W/"…"` never matches. ' +
      'Otherwise 412 `precondition_failed` with the current `ETag`: nothing is written and no event is sent; read the card again, reapply the change and retry. ' +
      'The condition is checked by the write itself: of two requests sent with the same tag, exactly one goes ahead. Every other refusal (400, 403, 404, 409) comes first. Without the header the write goes ahead as before. ' +
      'Not `*` nor a comma-separated list of entity tags: 400 before anything is looked up.',
    schema: ENTITY_TAGS_SCHEMA,
    example: '"k3Jd9Q0aQ2mX1n8bT5s7Yw"',
  };
}

function gatewayThrottledResponse() {
  return {
    description:
      "Throttled by API Gateway (the stage's rate and burst limits); retry with backoff. The gateway sends no Retry-After or rate-limit headers.",
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/GatewayMessage' },
        example: { message: 'Too Many Requests' },
      },
    },
  };
}

/** The headers of the service's answers in general: CORS, authentication, retries, compression, replays. */
function answerHeaders() {
  return {
    'Access-Control-Allow-Origin': {
      description:
        "On answers to cross-origin requests (with an `Origin` header) from an allowed origin: the stage's `corsOrigins` (`*` by default; no cookies are used).",
      schema: { type: 'string', pattern: '^(\\*|https?://\\S+)$', maxLength: 2048, examples: ['*'] },
    },
    'WWW-Authenticate': {
      description: '`Bearer` when no token was sent, `Bearer error="invalid_token"` when the token was rejected (RFC 6750).',
      required: true,
      schema: { type: 'string', enum: ['Bearer', 'Bearer error="invalid_token"'] },
    },
    'Retry-After': {
      description: 'Whole seconds to wait before retrying (1 today).',
      required: true,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 3600, examples: [1] },
    },
    Vary: {
      description: 'Always `accept-encoding`: the body may be compressed as the request allows.',
      required: true,
      schema: { type: 'string', enum: ['accept-encoding'] },
    },
    'Content-Encoding': {
      description:
        'On bodies of 1,000 bytes or more when `Accept-Encoding` allows: `br` preferred, else `gzip`. Absent on an uncompressed body.',
      schema: { type: 'string', enum: ['br', 'gzip'] },
    },
    ETag: {
      description:
        'A strong, opaque entity tag naming exactly this body: it changes whenever the body would (for a card, any of its fields, and a label it shows renamed or deleted), never because another card changed. Send it back in `If-None-Match` to re-read cheaply, or in `If-Match` to edit the card only if nobody changed it since.',
      required: true,
      schema: { type: 'string', pattern: '^"[\\x21\\x23-\\x7e]*"$', maxLength: 128, examples: ['"k3Jd9Q0aQ2mX1n8bT5s7Yw"'] },
    },
    'Idempotent-Replayed': {
      description:
        '`true` when this answer is the first answer to an earlier request with the same `Idempotency-Key`, replayed; absent otherwise.',
      schema: { type: 'string', enum: ['true'] },
    },
  };
}

/** The RateLimit fields every answer of a counted operation carries (withRateLimitFields). */
function rateLimitHeaders() {
  return {
    'RateLimit-Policy': {
      description:
        'The quota that counted this request (IETF draft-ietf-httpapi-ratelimit-headers, a Structured Field list): `"user";q=<requests>;w=<seconds>` for a request with a valid token, `"address";q=<requests>;w=<seconds>` for the credential routes and for requests whose token is missing or refused. Windows are fixed: they start at multiples of `w` seconds from the Unix epoch. Absent when the service could not count the request (it is then served uncounted).',
      schema: {
        type: 'string',
        maxLength: 64,
        pattern: '^"(user|address)";q=[0-9]{1,9};w=[0-9]{1,9}$',
        examples: ['"user";q=600;w=60'],
      },
    },
    RateLimit: {
      description:
        'Where this request leaves the quota of `RateLimit-Policy` (same draft): `r` requests left in the current window, `t` whole seconds until it resets (`r=0` on a 429, whose `Retry-After` is `t`). Absent when `RateLimit-Policy` is.',
      schema: {
        type: 'string',
        maxLength: 64,
        pattern: '^"(user|address)";r=[0-9]{1,9};t=[0-9]{1,9}$',
        examples: ['"user";r=599;t=42'],
      },
    },
  };
}

/** The Cache-Control of what changes only with a deployment: the two description documents and the reference page. */
function documentHeaders() {
  return {
    'Cache-Control': {
      description: 'The description changes only with a deployment.',
      required: true,
      schema: { type: 'string', enum: ['public, max-age=300'] },
    },
  };
}
