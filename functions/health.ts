import { route } from '../lib/http/route';

/** Liveness: the function runs. No token, no table. */
export const handler = route('health', async () => ({ status: 200, body: { status: 'ok' } }));
