import { logIn } from '../../lib/auth/cognito';
import { publicRoute } from '../../lib/http/public-route';

export const handler = publicRoute('auth.login', async ({ body }) => ({
  status: 200,
  body: await logIn(body.email, body.password),
}));
