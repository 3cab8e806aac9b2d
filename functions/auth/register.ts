import { createUser, logIn } from '../../lib/auth/cognito';
import { putUserProfile } from '../../lib/data/users';
import { route } from '../../lib/http/route';

/** Creates the Cognito user and its profile, then logs in once to hand back the first token. */
export const handler = route('auth.register', async ({ body }) => {
  await createUser(body.email, body.password, body.display_name, (userId) =>
    putUserProfile(userId, body.email, body.display_name),
  );
  return { status: 201, body: await logIn(body.email, body.password) };
});
