import { docsFileParams } from '../contract/docs-assets';
import type { RouteRow } from './row';

/** The service's own rows: liveness, its two documents and reference page, and the catch-all. */

export const health = {
  id: 'health',
  method: 'GET',
  path: '/health',
  entry: 'functions/health.ts',
  summary: 'Liveness of the service',
  access: { scope: 'public' },
  success: { status: 200, schema: 'health' },
  table: [],
  cognito: [],
} satisfies RouteRow;

export const openapi = {
  id: 'openapi',
  method: 'GET',
  path: '/openapi.json',
  entry: 'functions/openapi.ts',
  summary: 'This API described as OpenAPI 3.1',
  access: { scope: 'public' },
  success: { status: 200 },
  table: [],
  cognito: [],
} satisfies RouteRow;

export const asyncapi = {
  id: 'asyncapi',
  method: 'GET',
  path: '/asyncapi.json',
  entry: 'functions/asyncapi.ts',
  summary: 'The live board events protocol (WebSocket) described as AsyncAPI 3',
  access: { scope: 'public' },
  success: { status: 200 },
  table: [],
  cognito: [],
  // Its servers name this deployment's socket address.
  env: ['SOCKET_URL'],
} satisfies RouteRow;

export const docs = {
  id: 'docs',
  method: 'GET',
  path: '/docs',
  entry: 'functions/docs/page.ts',
  summary: 'This API as an interactive reference page (Swagger UI), served by the service itself',
  access: { scope: 'public' },
  success: { status: 200 },
  table: [],
  cognito: [],
} satisfies RouteRow;

export const docsFile = {
  id: 'docs.file',
  method: 'GET',
  path: '/docs/{file}',
  entry: 'functions/docs/file.ts',
  summary: "A script, style or image of the reference page (an allow-list of the renderer's files)",
  access: { scope: 'public' },
  params: docsFileParams,
  success: { status: 200 },
  table: [],
  errors: [404],
  cognito: [],
} satisfies RouteRow;

export const fallback = {
  id: 'fallback',
  method: 'ANY',
  path: '$default',
  entry: 'functions/fallback.ts',
  summary: 'Unknown path (404) or known path with another method (405)',
  access: { scope: 'public' },
  success: { status: 404 },
  table: [],
  cognito: [],
} satisfies RouteRow;
