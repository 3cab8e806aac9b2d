import { revoke } from '../../lib/auth/cognito';
import { credentialRoute } from '../../lib/http/credential-route';
import { authLogout } from '../../lib/rows/auth';

/** Revokes the refresh token; the access tokens already issued stay valid to this API until they expire. */
export const handler = credentialRoute(authLogout, async ({ body }) => {
  await revoke(body.refresh_token);
  return { status: 204 };
});
