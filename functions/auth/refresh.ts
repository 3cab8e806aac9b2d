import { refresh } from '../../lib/auth/cognito';
import { credentialRoute } from '../../lib/http/credential-route';
import { authRefresh } from '../../lib/rows/auth';

export const handler = credentialRoute(authRefresh, async ({ body }) => ({
  status: 200,
  body: await refresh(body.refresh_token),
}));
