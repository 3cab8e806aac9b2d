import { verifyEmail } from '../../lib/auth/accounts';
import { countGate } from '../../lib/http/rate-limit';
import { route } from '../../lib/http/route';
import { authVerifyEmail } from '../../lib/rows/auth';

export const handler = route(authVerifyEmail, async ({ caller, body }) => {
  await verifyEmail(caller, body.code, countGate());
  return { status: 204 };
});
