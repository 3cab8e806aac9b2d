import { resetForgottenPassword } from '../../lib/auth/accounts';
import { publicRoute } from '../../lib/http/public-route';
import { authPasswordReset } from '../../lib/rows/accounts';

export const handler = publicRoute(authPasswordReset, async ({ body }) => {
  await resetForgottenPassword(body.email, body.code, body.new_password);
  return { status: 204 };
});
