import { createHmac } from 'node:crypto';
import {
  AdminCreateUserCommand,
  AdminDeleteUserCommand,
  AdminGetUserCommand,
  AdminInitiateAuthCommand,
  AdminSetUserPasswordCommand,
  AdminUpdateUserAttributesCommand,
  AdminUserGlobalSignOutCommand,
  type AuthenticationResultType,
  ChangePasswordCommand,
  CognitoIdentityProviderClient,
  ConfirmForgotPasswordCommand,
  DescribeUserPoolClientCommand,
  ForgotPasswordCommand,
  GetTokensFromRefreshTokenCommand,
  GetUserAttributeVerificationCodeCommand,
  RevokeTokenCommand,
  VerifyUserAttributeCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { BadRequest, Conflict, InvalidCode, Unauthorized, Unavailable, WrongPassword } from '../domain/errors';
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

const nameOf = (error: unknown) => (error as Error).name;

/*
 * The app client has a secret (docs/accounts.md, "Cognito is no second door"): every call Cognito
 * answers for a bare client id (sign-up, sign-in, refresh, reset codes) needs it, so the client id
 * that every access token names lets nobody around this API. The secret is in no template and no
 * function setting: each function that needs it reads it from the pool once, on its first call
 * that needs it, and keeps it for the container's life.
 */
let clientSecret: Promise<string> | undefined;

function secret(): Promise<string> {
  if (!clientSecret) {
    const reading = cognito
      .send(new DescribeUserPoolClientCommand({ UserPoolId: userPoolId, ClientId: clientId }))
      .then((out) => {
        const value = out.UserPoolClient?.ClientSecret;
        if (!value) throw new Error(`app client ${clientId} has no secret`);
        return value;
      });
    // A failed read is not kept: the next request reads again.
    reading.catch(() => {
      if (clientSecret === reading) clientSecret = undefined;
    });
    clientSecret = reading;
  }
  return clientSecret;
}

/**
 * Runs a call that carries the client secret (or a hash of it). Cognito refuses a secret it no
 * longer holds (rotated, or the client replaced) with NotAuthorizedException, which would otherwise
 * read as the caller's wrong password or code: the kept secret is dropped and the call made once
 * more with a fresh one; refused again, it is the service's fault (500), never the caller's.
 */
async function withSecret<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!refusedSecret(error)) throw error;
    clientSecret = undefined;
    try {
      return await call();
    } catch (again) {
      if (refusedSecret(again)) throw new Error(`Cognito refuses app client ${clientId}'s secret`);
      throw again;
    }
  }
}

const refusedSecret = (error: unknown) =>
  nameOf(error) === 'NotAuthorizedException' && /secret/i.test((error as Error).message ?? '');

/** Cognito's SECRET_HASH for a call about `username`: Base64(HMAC-SHA256(secret, username + client id)). */
async function secretHash(username: string): Promise<string> {
  return createHmac('sha256', await secret())
    .update(username + clientId)
    .digest('base64');
}

/**
 * Creates a confirmed user and returns its Cognito `sub`. Self sign-up is off in the pool, so the
 * service creates users as the pool's administrator: AdminCreateUser (no message sent, the address
 * not verified in Cognito), then AdminSetUserPassword (permanent, checked against the pool's
 * policy). `afterCreate` runs before the user can log in; if it (or the password) fails, the user
 * is deleted again so that a retry of the registration is not refused as a duplicate.
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
      new AdminCreateUserCommand({
        UserPoolId: userPoolId,
        Username: username,
        MessageAction: 'SUPPRESS',
        UserAttributes: [
          { Name: 'email', Value: username },
          { Name: 'name', Value: displayName },
        ],
      }),
    );
    userId = out.User?.Attributes?.find((attribute) => attribute.Name === 'sub')?.Value ?? out.User!.Username!;
  } catch (error) {
    const name = nameOf(error);
    if (name === 'UsernameExistsException' || name === 'AliasExistsException')
      throw new Conflict('This email is already registered.');
    if (name === 'InvalidParameterException') throw new BadRequest('The email or display name was not accepted.');
    throw error;
  }
  try {
    await cognito
      .send(new AdminSetUserPasswordCommand({ UserPoolId: userPoolId, Username: username, Password: password, Permanent: true }))
      .catch((error: unknown) => {
        // InvalidParameterException: a password Cognito's own pattern refuses (leading or trailing blanks).
        throw ['InvalidPasswordException', 'InvalidParameterException'].includes(nameOf(error))
          ? new BadRequest('The password does not meet the password policy.')
          : error;
      });
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

/**
 * Whether the pool still has this user. An identity deleted by its own token (Cognito's DeleteUser)
 * leaves the service's account behind; registration asks this before it takes such an address back.
 */
export async function identityExists(userId: string): Promise<boolean> {
  try {
    await cognito.send(new AdminGetUserCommand({ UserPoolId: userPoolId, Username: userId }));
    return true;
  } catch (error) {
    if (nameOf(error) === 'UserNotFoundException') return false;
    throw error;
  }
}

/**
 * A password sign-in as the pool's administrator (ADMIN_USER_PASSWORD_AUTH). The app client allows
 * no other password flow, so a password can be tried only through this API and its address quota.
 */
async function signIn(email: string, password: string): Promise<AuthenticationResultType | undefined> {
  const username = email.toLowerCase();
  const out = await withSecret(async () =>
    cognito.send(
      new AdminInitiateAuthCommand({
        UserPoolId: userPoolId,
        ClientId: clientId,
        AuthFlow: 'ADMIN_USER_PASSWORD_AUTH',
        AuthParameters: { USERNAME: username, PASSWORD: password, SECRET_HASH: await secretHash(username) },
      }),
    ),
  );
  return out.AuthenticationResult;
}

export async function logIn(email: string, password: string): Promise<TokenResponse> {
  let result: AuthenticationResultType | undefined;
  try {
    result = await signIn(email, password);
  } catch (error) {
    if (BAD_CREDENTIALS.includes(nameOf(error))) throw wrongCredentials();
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
 * GetTokensFromRefreshToken says NotAuthorizedException (UserNotFoundException if its user is
 * gone), and InvalidParameterException for a token outside its pattern, which the body's schema
 * (no whitespace) lets through. A client set up without the flow is OperationNotEnabledException: a 500.
 */
const BAD_REFRESH_TOKEN = ['NotAuthorizedException', 'UserNotFoundException', 'InvalidParameterException'];
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
 * A new access token for a refresh token (GetTokensFromRefreshToken, which takes the client secret
 * as it is: InitiateAuth's refresh would need a SECRET_HASH over the user's name, which a refresh
 * token does not tell). No `refresh_token` in the answer: the app client does not rotate them, so
 * the client keeps the one it has until it expires (30 days) or is revoked.
 */
export async function refresh(refreshToken: string): Promise<TokenResponse> {
  let result: AuthenticationResultType | undefined;
  try {
    const out = await withSecret(async () =>
      cognito.send(
        new GetTokensFromRefreshTokenCommand({ RefreshToken: refreshToken, ClientId: clientId, ClientSecret: await secret() }),
      ),
    );
    result = out.AuthenticationResult;
  } catch (error) {
    if (BAD_REFRESH_TOKEN.includes(nameOf(error))) throw badRefreshToken();
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
    await withSecret(async () =>
      cognito.send(new RevokeTokenCommand({ ClientId: clientId, ClientSecret: await secret(), Token: refreshToken })),
    );
  } catch (error) {
    if (UNREVOCABLE_TOKEN.includes(nameOf(error))) throw badRefreshToken();
    throw error;
  }
}

/*
 * Accounts (docs/accounts.md): address verification, password reset and change, deletion. The
 * service's own record of a verified address is the table's (lib/data/users.ts); Cognito sends
 * the codes (the pool's own email on AWS, the outbox locally) and checks them.
 */

/**
 * A token-authorized Cognito call refused for the token itself: the user is gone, or (AWS, after
 * AdminUserGlobalSignOut) Cognito revoked the token for its own APIs although this API still
 * verifies its signature. The same 401 as a token this API refuses.
 */
const tokenRefused = () => new Unauthorized('The access token is invalid or has expired.', true);
const TOKEN_REFUSED = ['NotAuthorizedException', 'UserNotFoundException'];

/**
 * GetUserAttributeVerificationCode: Cognito mails a code to the caller's address; true when it did.
 * Too many codes asked for the user (LimitExceededException) sends none, and answers as if it had:
 * the caller's earlier code still works, with the tries it has left.
 */
export async function sendEmailCode(accessToken: string): Promise<boolean> {
  try {
    await cognito.send(new GetUserAttributeVerificationCodeCommand({ AccessToken: accessToken, AttributeName: 'email' }));
    return true;
  } catch (error) {
    if (TOKEN_REFUSED.includes(nameOf(error))) throw tokenRefused();
    if (nameOf(error) === 'LimitExceededException') {
      logger.info('no verification code sent', { reason: nameOf(error) });
      return false;
    }
    if (nameOf(error) === 'CodeDeliveryFailureException')
      throw new Unavailable('The code could not be mailed; try again later.', 60);
    throw error;
  }
}

/**
 * Codes Cognito did not accept: wrong, expired, used, or too many wrong tries for now (Cognito's
 * own lockouts, which the service's count of five tries normally reaches first).
 */
const CODE_REFUSED = [
  'CodeMismatchException',
  'ExpiredCodeException',
  'TooManyFailedAttemptsException',
  'LimitExceededException',
];

/** VerifyUserAttribute: the code mailed by `sendEmailCode` proves the address. */
export async function confirmEmailCode(accessToken: string, code: string): Promise<void> {
  try {
    await cognito.send(new VerifyUserAttributeCommand({ AccessToken: accessToken, AttributeName: 'email', Code: code }));
  } catch (error) {
    if (CODE_REFUSED.includes(nameOf(error))) throw new InvalidCode();
    if (TOKEN_REFUSED.includes(nameOf(error))) throw tokenRefused();
    throw error;
  }
}

/**
 * Sends a reset code to the address, whoever holds it, and never says whether anyone does.
 * Cognito mails reset codes only to an address its `email_verified` attribute vouches for
 * (ForgotPassword answers InvalidParameterException otherwise); an account that claimed the
 * address without proving it must still be recoverable by the mailbox's owner, so such an
 * account's attribute is set first (`unverified`): the code then goes to the mailbox, and the
 * service's own flag is set only when the code comes back (`resetPassword`). Every refusal is
 * swallowed (unknown user, no deliverable address, too many codes): the answer is the same 202.
 */
export async function sendResetCode(email: string, account?: { userId: string; verified: boolean }): Promise<boolean> {
  const username = email.toLowerCase();
  try {
    if (account && !account.verified) await markEmailVerified(account.userId, email);
    await withSecret(async () =>
      cognito.send(new ForgotPasswordCommand({ ClientId: clientId, Username: username, SecretHash: await secretHash(username) })),
    );
    return true;
  } catch (error) {
    const name = nameOf(error);
    if (NO_RESET_CODE.includes(name)) {
      logger.info('no reset code sent', { reason: name });
      return false;
    }
    throw error;
  }
}

/** Why ForgotPassword sent nothing: unknown user, no deliverable address, too many codes, mail refused. */
const NO_RESET_CODE = [
  'UserNotFoundException',
  'InvalidParameterException',
  'LimitExceededException',
  'NotAuthorizedException',
  'CodeDeliveryFailureException',
];

/** ConfirmForgotPassword; an unknown address is the same 400 as a wrong code (no enumeration). */
export async function resetPassword(email: string, code: string, newPassword: string): Promise<void> {
  const username = email.toLowerCase();
  try {
    await withSecret(async () =>
      cognito.send(
        new ConfirmForgotPasswordCommand({
          ClientId: clientId,
          Username: username,
          SecretHash: await secretHash(username),
          ConfirmationCode: code,
          Password: newPassword,
        }),
      ),
    );
  } catch (error) {
    const name = nameOf(error);
    if ([...CODE_REFUSED, 'UserNotFoundException', 'LimitExceededException', 'NotAuthorizedException'].includes(name)) {
      throw new InvalidCode();
    }
    if (name === 'InvalidPasswordException' || name === 'InvalidParameterException') {
      throw new BadRequest('The new password does not meet the password policy.');
    }
    throw error;
  }
}

/**
 * Checks the account's password with a sign-in, the one check Cognito answers alike on AWS and in
 * the emulator; the tokens it issues are revoked with the others.
 */
export async function checkPassword(email: string, password: string): Promise<void> {
  try {
    await signIn(email, password);
  } catch (error) {
    if (BAD_CREDENTIALS.includes(nameOf(error))) throw new WrongPassword();
    throw error;
  }
}

/** ChangePassword, once `checkPassword` has confirmed the current one. */
export async function changePassword(accessToken: string, current: string, next: string): Promise<void> {
  try {
    await cognito.send(
      new ChangePasswordCommand({ AccessToken: accessToken, PreviousPassword: current, ProposedPassword: next }),
    );
  } catch (error) {
    const name = nameOf(error);
    // The current password was checked just before: a refusal now is of the token (revoked, user gone).
    if (TOKEN_REFUSED.includes(name)) throw tokenRefused();
    if (name === 'InvalidPasswordException' || name === 'InvalidParameterException') {
      throw new BadRequest('The new password does not meet the password policy.');
    }
    throw error;
  }
}

/**
 * AdminUpdateUserAttributes: Cognito's `email_verified`, which decides where it may mail codes.
 * The address goes with it, unchanged: the emulator requires it, and on AWS an `email` sent with
 * `email_verified` true is the documented way to mail no verification message.
 */
async function markEmailVerified(userId: string, email: string): Promise<void> {
  await cognito.send(
    new AdminUpdateUserAttributesCommand({
      UserPoolId: userPoolId,
      Username: userId,
      UserAttributes: [
        { Name: 'email', Value: email.toLowerCase() },
        { Name: 'email_verified', Value: 'true' },
      ],
    }),
  );
}

/**
 * AdminUserGlobalSignOut: every refresh token Cognito issued to the user stops working (and, for
 * Cognito's own APIs, its access tokens). Access tokens already issued still verify for this API
 * until they expire (docs/accounts.md says what they can still do).
 */
export async function signOutEverywhere(userId: string): Promise<void> {
  await cognito.send(new AdminUserGlobalSignOutCommand({ UserPoolId: userPoolId, Username: userId }));
}

/** AdminDeleteUser: the identity is gone, with its refresh tokens; its address can register again. */
export async function deleteIdentity(userId: string): Promise<void> {
  try {
    await cognito.send(new AdminDeleteUserCommand({ UserPoolId: userPoolId, Username: userId }));
  } catch (error) {
    if (nameOf(error) !== 'UserNotFoundException') throw error; // deleted already: a retry
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
