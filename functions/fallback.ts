import { MethodNotAllowed, NotFound } from '../lib/domain/errors';
import { publicRoute } from '../lib/http/public-route';
import { methodsServedAt } from '../lib/rows/row';
import { servedMethods } from '../lib/rows/served';
import { fallback } from '../lib/rows/service';

/**
 * API Gateway's `$default` route: a path no row serves is 404, a path served with other methods
 * is 405 with `Allow`, both as problem+json rather than the gateway's own bodies. The served
 * paths come from lib/rows/served.ts (written from the table by `npm run openapi`), so that the
 * rows and their schemas stay out of this bundle.
 */
export const handler = publicRoute(fallback, async ({ event }) => {
  const path = event.rawPath ?? event.requestContext.http.path;
  const allow = methodsServedAt(servedMethods, path);
  if (allow.length > 0) throw new MethodNotAllowed(allow);
  throw new NotFound(`The path ${path}`);
});
