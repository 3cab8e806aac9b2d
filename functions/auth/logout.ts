import { revoke } from '../../lib/auth/cognito';
import { publicRoute } from '../../lib/http/public-route';
import { authLogout } from '../../lib/rows/auth';

/** Revokes the refresh token; the access tokens already issued stay valid to this API until they expire. */
export const handler = publicRoute(authLogout, async ({ body }) => {
  await revoke(body.refresh_token);
  return { status: 204 };
});
