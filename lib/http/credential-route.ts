import type { AccessSteps, RouteInput, RouteResult } from './chain';
import { buildRoute } from './chain';
import type { PublicRow, StepsOf } from './public-route';
import { rateLimitSteps } from './rate-limit';

/** The public rows that take a credential in their body (lib/rows/row.ts `rateLimitOf`: throttled at the identity rate). */
export type CredentialRow = PublicRow & { throttle: 'identity' };

/**
 * The handler of a public row that takes credentials (register, login, refresh, logout, password
 * forgot and reset): `publicRoute()` with each request counted against its client address's rate
 * limit (docs/rate-limits.md), which a password-guessing loop runs into. Its own entry
 * point, like publicRoute(), so that only these functions carry the counter's table client.
 */
export function credentialRoute<R extends CredentialRow>(
  row: R,
  handler: (input: RouteInput<R, undefined>) => Promise<RouteResult>,
  ...steps: StepsOf<R>
) {
  return buildRoute(row, handler, { ...((steps as [AccessSteps?])[0] ?? {}), limit: rateLimitSteps(row) });
}
