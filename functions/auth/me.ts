import { readAccount } from '../../lib/data/users';
import { route } from '../../lib/http/route';
import { authMe } from '../../lib/rows/auth';

export const handler = route(authMe, async ({ caller }) => ({ status: 200, body: await readAccount(caller.id) }));
