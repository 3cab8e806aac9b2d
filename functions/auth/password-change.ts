import { changeMyPassword } from '../../lib/auth/accounts';
import { route } from '../../lib/http/route';
import { authPasswordChange } from '../../lib/rows/accounts';

export const handler = route(authPasswordChange, async ({ caller, body }) => {
  await changeMyPassword(caller, body.current_password, body.new_password);
  return { status: 204 };
});
