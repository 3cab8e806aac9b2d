import { forgotPassword } from '../../lib/auth/accounts';
import { credentialRoute } from '../../lib/http/credential-route';
import { countGate } from '../../lib/http/rate-limit';
import { authPasswordForgot } from '../../lib/rows/auth';

/** 202 whether or not an account holds the address: nothing here tells which. */
export const handler = credentialRoute(authPasswordForgot, async ({ body }) => {
  await forgotPassword(body.email, countGate());
  return { status: 202 };
});
