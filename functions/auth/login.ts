import { logIn } from '../../lib/auth/cognito';
import { publicRoute } from '../../lib/http/public-route';
import { authLogin } from '../../lib/rows/auth';

export const handler = publicRoute(authLogin, async ({ body }) => ({
  status: 200,
  body: await logIn(body.email, body.password),
}));
