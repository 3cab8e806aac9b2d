import { MethodNotAllowed, NotFound } from '../lib/domain/errors';
import { allowedAt, catchAllAnswer } from '../lib/http/catch-all';
import { publicRoute } from '../lib/http/public-route';
import { fallback } from '../lib/rows/fallback';
import { servedMethods } from '../lib/rows/served';

/**
 * API Gateway's `$default` route: `HEAD /health` and a served path with a trailing slash are
 * answered as lib/http/catch-all.ts says; any other path no row serves is 404, a path served with
 * other methods is 405 with `Allow`, both as problem+json rather than the gateway's own bodies. The
 * served paths come from lib/rows/served.ts (written from the table by `npm run openapi`), so that
 * the rows and their schemas stay out of this bundle.
 */
export const handler = publicRoute(fallback, async ({ event }) => {
  const path = event.rawPath ?? event.requestContext.http.path;
  const answer = catchAllAnswer(event.requestContext.http.method, path, event.rawQueryString, servedMethods);
  if (answer) return answer;
  const allow = allowedAt(servedMethods, path);
  if (allow.length > 0) throw new MethodNotAllowed(allow);
  throw new NotFound(`The path ${path}`);
});
