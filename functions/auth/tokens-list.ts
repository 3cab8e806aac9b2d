import { listPersonalTokens } from '../../lib/data/personal-tokens';
import { route } from '../../lib/http/route';
import { authTokensList } from '../../lib/rows/auth';

export const handler = route(authTokensList, async ({ caller }) => ({ status: 200, body: await listPersonalTokens(caller.id) }));
