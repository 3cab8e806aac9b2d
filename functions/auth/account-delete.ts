import { deleteMyAccount } from '../../lib/auth/accounts';
import { countGate } from '../../lib/http/rate-limit';
import { route } from '../../lib/http/route';
import { authAccountDelete } from '../../lib/rows/auth';

/** The account is unreachable when this answers; the account collector leaves its boards after. */
export const handler = route(authAccountDelete, async ({ caller, body }) => {
  await deleteMyAccount(caller, body.password, countGate());
  return { status: 204 };
});
