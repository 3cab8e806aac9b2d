import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import renderer from 'swagger-ui-dist/package.json';
import { DOCS_FILES, DOCS_PACKAGE, type DocsFile } from '../contract/docs-assets';
import { NotFound } from '../domain/errors';
import type { RouteResult } from './chain';

/**
 * GET /docs and GET /docs/{file}: Swagger UI (npm `swagger-ui-dist`) rendering GET /openapi.json,
 * every byte served by this service. The page and its files are made or read once per container.
 *
 * The page's URLs are relative: at `/docs`, `docs/swagger-ui.css` is `/docs/swagger-ui.css` and
 * `openapi.json` is `/openapi.json`, whose `servers` names the origin it was requested from, so
 * "Try it out" calls this same deployment (served at the origin's root: the stack's `$default`
 * stage and root domain mapping; a path prefix would need `servers` to name it too). The files'
 * URLs carry the package version, and only a request for the version this function carries is
 * cached for a year: during a deployment, a new page may briefly reach an old file function.
 */
const version = encodeURIComponent(renderer.version);
const asset = (file: DocsFile) => `docs/${file}?v=${version}`;

/**
 * Swagger UI's settings: the one document, no validator badge (it would load an image from
 * swagger.io), the bearer token forgotten with the page. Swagger UI 5 warns, in a red box, about
 * any `jsonSchemaDialect` but OpenAPI's own default; the document declares plain JSON Schema
 * 2020-12, which Swagger UI renders all the same, so the dialect is shown as a plain line instead.
 */
const INIT_SCRIPT = `const dialectLine = (system) => ({
  components: {
    JsonSchemaDialect: ({ specSelectors }) => {
      const dialect = specSelectors.selectJsonSchemaDialectField();
      return dialect ? system.React.createElement("p", { className: "info__jsonschemadialect" }, "JSON Schema dialect: " + dialect) : null;
    }
  }
});
window.ui = SwaggerUIBundle({
  url: "openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  persistAuthorization: false,
  displayRequestDuration: true,
  presets: [SwaggerUIBundle.presets.apis],
  plugins: [dialectLine],
  layout: "BaseLayout"
});`;

/**
 * Only this origin's files and the one inline script (by its hash); Swagger UI's icons are data:
 * images in its CSS; requests ("Try it out") go to this origin only. No framing, no forms.
 */
const DOCS_CSP = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${createHash('sha256').update(INIT_SCRIPT).digest('base64')}'`,
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>task-board API reference</title>
<link rel="stylesheet" href="${asset('swagger-ui.css')}">
<link rel="icon" type="image/png" href="${asset('favicon-32x32.png')}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${asset('swagger-ui-bundle.js')}"></script>
<script>${INIT_SCRIPT}</script>
</body>
</html>
`;

let page: Buffer | undefined;

/** The page, as the docs row answers it. */
export function docsPage(): RouteResult {
  page ??= Buffer.from(PAGE, 'utf8');
  return {
    status: 200,
    raw: { bytes: page, contentType: 'text/html; charset=utf-8' },
    headers: {
      'cache-control': 'public, max-age=300',
      'content-security-policy': DOCS_CSP,
      'referrer-policy': 'no-referrer',
    },
  };
}

/**
 * The package's directory, found the same way in the repository and in the function's bundle
 * (which carries the files in node_modules/swagger-ui-dist/ beside index.mjs: infra/api-function.ts).
 */
let packageDir: string | undefined;
const files = new Map<DocsFile, Buffer>();

/**
 * One of the allow-listed files, read on its first request; any other name is 404. Cached for a
 * year only when asked for under this function's version (`?v=`), otherwise revalidated each time.
 */
export function docsFile(name: string, requestedVersion: string | undefined): RouteResult {
  if (!Object.hasOwn(DOCS_FILES, name)) throw new NotFound(`The file ${name}`);
  const file = name as DocsFile;
  let bytes = files.get(file);
  if (!bytes) {
    packageDir ??= dirname(createRequire(import.meta.url).resolve(`${DOCS_PACKAGE}/package.json`));
    bytes = readFileSync(join(packageDir, file));
    files.set(file, bytes);
  }
  return {
    status: 200,
    raw: { bytes, contentType: DOCS_FILES[file] },
    headers: {
      'cache-control': requestedVersion === renderer.version ? 'public, max-age=31536000, immutable' : 'no-cache',
    },
  };
}
