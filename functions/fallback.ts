import { MethodNotAllowed, NotFound } from '../lib/domain/errors';
import { publicRoute } from '../lib/http/public-route';
import { methodsAt } from '../lib/routes';

/**
 * API Gateway's `$default` route: a path no row serves is 404, a path served with other methods
 * is 405 with `Allow`, both as problem+json rather than the gateway's own bodies.
 */
export const handler = publicRoute('fallback', async ({ event }) => {
  const path = event.rawPath ?? event.requestContext.http.path;
  const allow = methodsAt(path);
  if (allow.length > 0) throw new MethodNotAllowed(allow);
  throw new NotFound(`The path ${path}`);
});
