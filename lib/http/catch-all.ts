import { methodsServedAt } from '../rows/row';
import type { RouteResult } from './chain';

/**
 * What the catch-all (API Gateway's `$default` route, functions/fallback.ts) answers before its
 * 404 and 405, for the requests a newcomer's tools make that no row is for:
 *
 * - `HEAD /health`: uptime checkers probe with HEAD. The answer is the health check's without
 *   its body: the catch-all running shows what `GET /health` running shows (the stage routes to
 *   functions and they answer), so it is 200 here rather than a second function.
 * - A served path with a trailing slash (`GET /docs/`, what a browser or a person types): 308 to
 *   the path without it, query kept. Only GET and HEAD are redirected: an API client sending a
 *   body to a wrong path gets the 404 that tells it so.
 *
 * Everything else stays the catch-all's: 405 with `Allow` (`allowedAt`, which names HEAD on
 * /health) on a served path, 404 otherwise.
 */
const HEALTH_PATH = '/health';

/** The methods served at a concrete path, HEAD included where the catch-all serves it. */
export function allowedAt(servedMethods: Record<string, readonly string[]>, path: string): string[] {
  const methods = methodsServedAt(servedMethods, path);
  return path === HEALTH_PATH && methods.length > 0 ? [...methods, 'HEAD'] : methods;
}

export function catchAllAnswer(
  method: string,
  path: string,
  rawQueryString: string | undefined,
  servedMethods: Record<string, readonly string[]>,
): RouteResult | undefined {
  if (method === 'HEAD' && path === HEALTH_PATH) {
    return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } };
  }
  if ((method === 'GET' || method === 'HEAD') && path.length > 1 && path.endsWith('/')) {
    const bare = path.replace(/\/+$/, '') || '/';
    if (methodsServedAt(servedMethods, bare).includes('GET')) {
      return { status: 308, headers: { location: rawQueryString ? `${bare}?${rawQueryString}` : bare } };
    }
  }
  return undefined;
}
