import { register } from '../../lib/auth/accounts';
import { logIn } from '../../lib/auth/cognito';
import { credentialRoute } from '../../lib/http/credential-route';
import { answerOnce } from '../../lib/http/idempotency';
import { authRegister } from '../../lib/rows/auth';

/**
 * Creates the Cognito user and its profile, then logs in once to hand back the first token. A
 * retry under the same Idempotency-Key (`replay`) only logs in again: its tokens are never kept.
 */
export const handler = credentialRoute(
  authRegister,
  async ({ body, replay }) => {
    if (!replay) await register(body.email, body.password, body.display_name);
    return { status: 201, body: await logIn(body.email, body.password) };
  },
  { once: answerOnce },
);
