import * as v from 'valibot';
import type { Lazy } from './schemas';

/**
 * The API reference page (GET /docs) is Swagger UI from the npm package `swagger-ui-dist`, served
 * by the service itself: the page's scripts and styles come from GET /docs/{file}, nothing from a
 * CDN. This module is what the route table and CDK need to know (it reads no file): the files
 * served, by name, with their content types. Any other name is 404.
 */
export const DOCS_PACKAGE = 'swagger-ui-dist';

export const DOCS_FILES = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  // The bundle's own comment points here, next to it, for its third-party licences.
  'swagger-ui-bundle.js.LICENSE.txt': 'text/plain; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;

export type DocsFile = keyof typeof DOCS_FILES;
export const DOCS_FILE_NAMES = Object.keys(DOCS_FILES) as DocsFile[];

/**
 * The package's files the docs.file function's bundle carries (infra/api-function.ts copies them
 * into `node_modules/swagger-ui-dist/` beside index.mjs): those served, `package.json`, by which
 * the function finds the directory, and the package's licence and notice (Apache-2.0).
 */
export const DOCS_BUNDLED_FILES = ['package.json', 'LICENSE', 'NOTICE', ...DOCS_FILE_NAMES];

/** A name that could be a file of the package; one that is not served is 404, not 400. */
const FILE_NAME = /^[A-Za-z0-9._-]+$/;

const fileParams = () =>
  v.object({
    file: v.pipe(
      v.string(),
      v.maxLength(100, 'must be at most 100 characters'),
      v.regex(FILE_NAME, 'must be a file name (letters, digits, ".", "_" and "-")'),
      v.metadata({ enum: DOCS_FILE_NAMES }),
    ),
  });
let params: ReturnType<typeof fileParams> | undefined;
/** GET /docs/{file}: the validator checks the shape of a file name, the document lists the files served. */
export const docsFileParams: Lazy<ReturnType<typeof fileParams>> = () => {
  params ??= fileParams();
  return params;
};
