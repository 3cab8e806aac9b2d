import { requestEmailVerification } from '../../lib/auth/accounts';
import { route } from '../../lib/http/route';
import { authVerifyEmailRequest } from '../../lib/rows/auth';

/** Cognito mails a code to the caller's address (the local stack's outbox keeps it). */
export const handler = route(authVerifyEmailRequest, async ({ caller }) => {
  await requestEmailVerification(caller);
  return { status: 202 };
});
