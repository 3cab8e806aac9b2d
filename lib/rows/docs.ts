import { docsFileParams } from '../contract/docs-assets';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/** The API's reference page and its files, served by the service itself. */

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
