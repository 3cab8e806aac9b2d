import { forgotPassword } from '../../lib/auth/accounts';
import { publicRoute } from '../../lib/http/public-route';
import { authPasswordForgot } from '../../lib/rows/accounts';

/** 202 whether or not an account holds the address: nothing here tells which. */
export const handler = publicRoute(authPasswordForgot, async ({ body }) => {
  await forgotPassword(body.email);
  return { status: 202 };
});
