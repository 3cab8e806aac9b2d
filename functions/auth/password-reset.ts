import { resetForgottenPassword } from '../../lib/auth/accounts';
import { credentialRoute } from '../../lib/http/credential-route';
import { countGate } from '../../lib/http/rate-limit';
import { authPasswordReset } from '../../lib/rows/auth';

export const handler = credentialRoute(authPasswordReset, async ({ body }) => {
  await resetForgottenPassword(body.email, body.code, body.new_password, countGate());
  return { status: 204 };
});
