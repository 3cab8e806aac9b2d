import { logIn } from '../../lib/auth/cognito';
import { route } from '../../lib/http/route';

export const handler = route('auth.login', async ({ body }) => ({
  status: 200,
  body: await logIn(body.email, body.password),
}));
