import { docsFileParams } from '../contract/docs-assets';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/** The service's own rows: liveness, its two documents and reference page, and the catch-all. */

export const health = {
  id: 'health',
  method: 'GET',
  path: '/health',
  entry: 'functions/health.ts',
  group: 'service',
  logGroup: 'root',
  summary: 'Liveness of the service',
  access: { scope: 'public' },
  success: { status: 200, schema: 'health' },
  table: [],
  cognito: [],
} satisfies RouteRow;

export const healthText = {
  of: health,
  tag: 'health',
  description:
    'Answers `{"status": "ok"}` while the service runs. No token; touches no storage. `HEAD /health` answers 200 without a body, for uptime checks.',
} satisfies RouteText;

export const openapi = {
  id: 'openapi',
  method: 'GET',
  path: '/openapi.json',
  entry: 'functions/openapi.ts',
  group: 'service',
  logGroup: 'root',
  summary: 'This API described as OpenAPI 3.1',
  access: { scope: 'public' },
  success: { status: 200 },
  table: [],
  cognito: [],
} satisfies RouteRow;

export const openapiText = {
  of: openapi,
  tag: 'openapi',
  description:
    'This document. No token. `servers` names the origin the document was requested from, so "try it" works against the deployment that served it.',
} satisfies RouteText;

export const asyncapi = {
  id: 'asyncapi',
  method: 'GET',
  path: '/asyncapi.json',
  entry: 'functions/asyncapi.ts',
  group: 'service',
  logGroup: 'root',
  summary: 'The live board events protocol (WebSocket) described as AsyncAPI 3',
  access: { scope: 'public' },
  success: { status: 200 },
  table: [],
  cognito: [],
  // Its servers name this deployment's socket address.
  env: ['SOCKET_URL'],
} satisfies RouteRow;

export const asyncapiText = {
  of: asyncapi,
  tag: 'asyncapi',
  description:
    'The WebSocket protocol of live board events (AsyncAPI 3): how to connect with a ticket from `POST /realtime/tickets`, the messages to send and the events received. No token.',
} satisfies RouteText;

export const docs = {
  id: 'docs',
  method: 'GET',
  path: '/docs',
  entry: 'functions/docs/page.ts',
  group: 'service',
  logGroup: 'root',
  summary: 'This API as an interactive reference page (Swagger UI), served by the service itself',
  access: { scope: 'public' },
  success: { status: 200 },
  table: [],
  cognito: [],
} satisfies RouteRow;

export const docsText = {
  of: docs,
  tag: 'docs',
  description:
    'An HTML page that renders `GET /openapi.json` with Swagger UI (npm `swagger-ui-dist`), for reading the API and trying its operations in a browser ("Try it out" calls the origin the page was served from; paste an access token under "Authorize"). Its scripts and styles come from `GET /docs/{file}`: nothing is loaded from elsewhere (see the `Content-Security-Policy`). No token.',
} satisfies RouteText;

export const docsFile = {
  id: 'docs.file',
  method: 'GET',
  path: '/docs/{file}',
  entry: 'functions/docs/file.ts',
  group: 'service',
  logGroup: 'root',
  summary: "A script, style or image of the reference page (an allow-list of the renderer's files)",
  access: { scope: 'public' },
  params: docsFileParams,
  success: { status: 200 },
  table: [],
  errors: [404],
  cognito: [],
} satisfies RouteRow;

export const docsFileText = {
  of: docsFile,
  tag: 'docs',
  description:
    "One file of the reference page, from an allow-list of the renderer's files, with its own content type; a name not on the list is 404. The URLs the page uses carry the renderer's version (`?v=`); a file asked for under the version served is cached for a year, under another or none it is revalidated (`no-cache`). No token.",
} satisfies RouteText;

export const fallback = {
  id: 'fallback',
  method: 'ANY',
  path: '$default',
  entry: 'functions/fallback.ts',
  group: 'service',
  logGroup: 'root',
  summary: 'Unknown path (404) or known path with another method (405)',
  access: { scope: 'public' },
  success: { status: 404 },
  table: [],
  cognito: [],
} satisfies RouteRow;
