import { createPersonalToken } from '../../lib/data/personal-tokens';
import { countGate } from '../../lib/http/rate-limit';
import { route } from '../../lib/http/route';
import { authTokensCreate } from '../../lib/rows/auth';
import { ENV, secondsFromEnv } from '../../lib/runtime/config';

/** One of `expires_in_days`' days, in seconds: a day, or less on a local stack that tests expiry. */
const daySeconds = secondsFromEnv(ENV.personalTokenDaySeconds, 86_400);

export const handler = route(authTokensCreate, async ({ caller, body }) => {
  const request = { name: body.name, scopes: body.scopes, expiresInDays: body.expires_in_days, boardIds: body.board_ids ?? null };
  const token = await createPersonalToken(caller.id, request, daySeconds, countGate(), caller.issuedAt ?? 0);
  return { status: 201, body: token };
});
