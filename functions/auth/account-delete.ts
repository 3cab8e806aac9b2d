import { deleteMyAccount } from '../../lib/auth/accounts';
import { route } from '../../lib/http/route';
import { authAccountDelete } from '../../lib/rows/accounts';

/** The account is unreachable when this answers; the account collector leaves its boards after. */
export const handler = route(authAccountDelete, async ({ caller, body }) => {
  await deleteMyAccount(caller, body.password);
  return { status: 204 };
});
