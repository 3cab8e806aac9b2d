import { logIn } from '../../lib/auth/cognito';
import { credentialRoute } from '../../lib/http/credential-route';
import { authLogin } from '../../lib/rows/auth';

export const handler = credentialRoute(authLogin, async ({ body }) => ({
  status: 200,
  body: await logIn(body.email, body.password),
}));
