import { deletePersonalToken } from '../../lib/data/personal-tokens';
import { countGate } from '../../lib/http/rate-limit';
import { route } from '../../lib/http/route';
import { authTokensDelete } from '../../lib/rows/auth';

/** Another user's token is as unknown as one that never existed: 404. */
export const handler = route(authTokensDelete, async ({ caller, params }) => {
  await deletePersonalToken(caller.id, params.id, countGate());
  return { status: 204 };
});
