import document from '../docs/asyncapi.json';
import { withSocketServer } from '../lib/http/asyncapi';
import { publicRoute } from '../lib/http/public-route';
import { asyncapi } from '../lib/rows/asyncapi';
import { ENV, requireEnv } from '../lib/runtime/config';

/** The live events protocol (docs/asyncapi.yaml, converted by `npm run asyncapi`), with this deployment's socket address. */
const served = withSocketServer(document, requireEnv(ENV.socketUrl));

export const handler = publicRoute(asyncapi, async () => ({
  status: 200,
  body: served,
  headers: { 'cache-control': 'public, max-age=300' },
}));
