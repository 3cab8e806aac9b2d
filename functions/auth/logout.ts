import { revoke } from '../../lib/auth/cognito';
import { publicRoute } from '../../lib/http/public-route';

/** Revokes the refresh token; the access tokens already issued stay valid to this API until they expire. */
export const handler = publicRoute('auth.logout', async ({ body }) => {
  await revoke(body.refresh_token);
  return { status: 204 };
});
