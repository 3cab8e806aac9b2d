import { refresh } from '../../lib/auth/cognito';
import { publicRoute } from '../../lib/http/public-route';

export const handler = publicRoute('auth.refresh', async ({ body }) => ({
  status: 200,
  body: await refresh(body.refresh_token),
}));
