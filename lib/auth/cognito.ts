import {
  AdminConfirmSignUpCommand,
  AdminDeleteUserCommand,
  type AuthenticationResultType,
  CognitoIdentityProviderClient,
  InitiateAuthCommand,
  RevokeTokenCommand,
  SignUpCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { BadRequest, Conflict, Unauthorized } from '../domain/errors';
import { ENV, requireEnv } from '../runtime/config';
import { outsideDeadline, stopAtDeadline } from '../runtime/deadline';
import { logger, sdkLogger } from '../runtime/logger';

const userPoolId = requireEnv(ENV.userPoolId);
const clientId = requireEnv(ENV.userPoolClientId);
const cognito = new CognitoIdentityProviderClient({ logger: sdkLogger });
stopAtDeadline(cognito);

export interface TokenResponse {
  token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
}

const BAD_CREDENTIALS = [
  'NotAuthorizedException',
  'UserNotFoundException',
  'InvalidPasswordException',
  'UserNotConfirmedException',
  'PasswordResetRequiredException',
];

/**
 * Creates a confirmed user and returns its Cognito `sub`. SignUp then AdminConfirmSignUp: no
 * verification message is sent, and the password policy is the pool's. `afterCreate` runs before
 * the user can log in; if it (or the confirmation) fails, the user is deleted again so that a
 * retry of the registration is not refused as a duplicate.
 */
export async function createUser(
  email: string,
  password: string,
  displayName: string,
  afterCreate: (userId: string) => Promise<unknown>,
): Promise<string> {
  const username = email.toLowerCase();
  let userId: string;
  try {
    const out = await cognito.send(
      new SignUpCommand({
        ClientId: clientId,
        Username: username,
        Password: password,
        UserAttributes: [
          { Name: 'email', Value: username },
          { Name: 'name', Value: displayName },
        ],
      }),
    );
    userId = out.UserSub!;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'UsernameExistsException' || name === 'AliasExistsException')
      throw new Conflict('This email is already registered.');
    if (name === 'InvalidPasswordException') throw new BadRequest('The password does not meet the password policy.');
    if (name === 'InvalidParameterException') throw new BadRequest('The email or display name was not accepted.');
    throw error;
  }
  try {
    await cognito.send(new AdminConfirmSignUpCommand({ UserPoolId: userPoolId, Username: username }));
    await afterCreate(userId);
  } catch (error) {
    // Even past the request's deadline: a confirmed user without a profile could never register again.
    await outsideDeadline(() => cognito.send(new AdminDeleteUserCommand({ UserPoolId: userPoolId, Username: username }))).catch(
      (cleanupError: unknown) => logger.error('could not remove a half-registered user', { error: cleanupError }),
    );
    throw error;
  }
  return userId;
}

export async function logIn(email: string, password: string): Promise<TokenResponse> {
  let result: AuthenticationResultType | undefined;
  try {
    const out = await cognito.send(
      new InitiateAuthCommand({
        AuthFlow: 'USER_PASSWORD_AUTH',
        ClientId: clientId,
        AuthParameters: { USERNAME: email.toLowerCase(), PASSWORD: password },
      }),
    );
    result = out.AuthenticationResult;
  } catch (error) {
    if (BAD_CREDENTIALS.includes((error as Error).name)) throw wrongCredentials();
    throw error;
  }
  if (!result?.AccessToken) throw wrongCredentials(); // a challenge (e.g. a forced reset) is not a login
  return {
    token: result.AccessToken,
    token_type: 'Bearer',
    expires_in: result.ExpiresIn ?? secondsLeft(result.AccessToken),
    refresh_token: result.RefreshToken,
  };
}

/**
 * Cognito's answers to a refresh token it will not honour: unknown, malformed, expired, revoked,
 * issued to another client or pool, or not a refresh token at all (an access token).
 * InitiateAuth says NotAuthorizedException (UserNotFoundException if its user is gone; not
 * InvalidParameterException, which there means a client set up without the flow: a 500).
 */
const BAD_REFRESH_TOKEN = ['NotAuthorizedException', 'UserNotFoundException'];
/**
 * RevokeToken says UnauthorizedException for a token it cannot revoke, UnsupportedTokenTypeException
 * for one that is not a refresh token and InvalidParameterException for one outside its token
 * pattern `[A-Za-z0-9-_=.]+`; the local emulator says NotAuthorizedException.
 * UnsupportedOperationException (revocation off for the client) stays a 500.
 */
const UNREVOCABLE_TOKEN = [
  'NotAuthorizedException',
  'UnauthorizedException',
  'UnsupportedTokenTypeException',
  'InvalidParameterException',
];

/**
 * A new access token for a refresh token (REFRESH_TOKEN_AUTH). No `refresh_token` in the answer:
 * Cognito issues none on this flow (the pool does not rotate refresh tokens), so the client keeps
 * the one it has until it expires (30 days) or is revoked.
 */
export async function refresh(refreshToken: string): Promise<TokenResponse> {
  let result: AuthenticationResultType | undefined;
  try {
    const out = await cognito.send(
      new InitiateAuthCommand({
        AuthFlow: 'REFRESH_TOKEN_AUTH',
        ClientId: clientId,
        AuthParameters: { REFRESH_TOKEN: refreshToken },
      }),
    );
    result = out.AuthenticationResult;
  } catch (error) {
    if (BAD_REFRESH_TOKEN.includes((error as Error).name)) throw badRefreshToken();
    throw error;
  }
  if (!result?.AccessToken) throw badRefreshToken();
  return {
    token: result.AccessToken,
    token_type: 'Bearer',
    expires_in: result.ExpiresIn ?? secondsLeft(result.AccessToken),
  };
}

/**
 * Revokes a refresh token (RevokeToken) and, on AWS, the access tokens issued from it. A token
 * Cognito refuses to revoke (unknown, malformed, not a refresh token, already revoked where
 * Cognito says so) is the same 401 as for refresh; a token Cognito accepts again is a 204 again.
 */
export async function revoke(refreshToken: string): Promise<void> {
  try {
    await cognito.send(new RevokeTokenCommand({ ClientId: clientId, Token: refreshToken }));
  } catch (error) {
    if (UNREVOCABLE_TOKEN.includes((error as Error).name)) throw badRefreshToken();
    throw error;
  }
}

/** The credential is in the body, not a bearer token: WWW-Authenticate stays plain `Bearer`, as for login. */
const badRefreshToken = () => new Unauthorized('The refresh token is invalid, expired or revoked.', false);

/** One message for an unknown email and a wrong password: no account enumeration. */
const wrongCredentials = () => new Unauthorized('The email or password is wrong.', false);

function secondsLeft(jwt: string): number {
  const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: number };
  return Math.max(0, (payload.exp ?? 0) - Math.floor(Date.now() / 1000));
}
