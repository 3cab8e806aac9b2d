import { publicRoute } from '../lib/http/public-route';
import { health } from '../lib/rows/health';

/** Liveness: the function runs. No token, no table. */
export const handler = publicRoute(health, async () => ({ status: 200, body: { status: 'ok' } }));
