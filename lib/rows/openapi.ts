import type { RouteRow } from './row';
import type { RouteText } from './text';

/** This API's OpenAPI document, served by the service itself. */

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
