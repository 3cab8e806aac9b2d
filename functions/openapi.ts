import { buildOpenApiDocument, serversFor } from '../lib/http/openapi';
import { publicRoute } from '../lib/http/public-route';
import { openapi } from '../lib/rows/openapi';

/** Built on the first request and kept for the container's life: it never changes. */
let document: ReturnType<typeof buildOpenApiDocument> | undefined;

export const handler = publicRoute(openapi, async ({ event }) => {
  document ??= buildOpenApiDocument();
  return {
    status: 200,
    body: { ...document, servers: serversFor(event) },
    headers: { 'cache-control': 'public, max-age=300' },
  };
});
