import { changeMyPassword } from '../../lib/auth/accounts';
import { countGate } from '../../lib/http/rate-limit';
import { route } from '../../lib/http/route';
import { authPasswordChange } from '../../lib/rows/auth';

export const handler = route(authPasswordChange, async ({ caller, body }) => {
  await changeMyPassword(caller, body.current_password, body.new_password, countGate());
  return { status: 204 };
});
