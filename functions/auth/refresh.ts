import { refresh } from '../../lib/auth/cognito';
import { publicRoute } from '../../lib/http/public-route';
import { authRefresh } from '../../lib/rows/auth';

export const handler = publicRoute(authRefresh, async ({ body }) => ({
  status: 200,
  body: await refresh(body.refresh_token),
}));
