import document from '../docs/asyncapi.json';
import { publicRoute } from '../lib/http/public-route';

/** The live events protocol, bundled as written (docs/asyncapi.yaml, converted by `npm run asyncapi`). */
export const handler = publicRoute('asyncapi', async () => ({
  status: 200,
  body: document,
  headers: { 'cache-control': 'public, max-age=300' },
}));
