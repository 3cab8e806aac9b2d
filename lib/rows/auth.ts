import {
  changePasswordBody,
  createPersonalTokenBody,
  deleteAccountBody,
  forgotPasswordBody,
  idParams,
  loginBody,
  refreshBody,
  registerBody,
  resetPasswordBody,
  verifyEmailBody,
} from '../contract/schemas';
import type { PoolTriggerRow, RouteRow } from './row';
import type { RouteText } from './text';

/**
 * Accounts and tokens (docs/accounts.md). Registration, login, refresh and logout are public rows
 * (the body holds the credential), throttled at the identity rate. Then the caller's account,
 * address verification, password reset and change, and deletion (finished by the stream's cleanup
 * reader, `children.collect` in lib/rows/children.ts). Each row lists exactly the Cognito actions
 * that evaluate IAM (the token-authorized and public Cognito APIs evaluate none).
 */

export const authRegister = {
  id: 'auth.register',
  method: 'POST',
  path: '/auth/register',
  throttle: 'identity',
  entry: 'functions/auth/register.ts',
  logGroup: 'root',
  summary: 'Register a user and receive an access token',
  access: { scope: 'public' },
  body: registerBody,
  success: { status: 201, schema: 'tokenResponse' },
  idempotent: 'account',
  // BatchGetItem and DeleteItem only when the address is held by an account whose identity is gone.
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem'],
  errors: [409],
  metric: 'UserRegistered',
  cognito: [
    'cognito-idp:AdminCreateUser',
    'cognito-idp:AdminSetUserPassword',
    'cognito-idp:AdminDeleteUser',
    'cognito-idp:AdminGetUser',
    'cognito-idp:AdminInitiateAuth',
    'cognito-idp:DescribeUserPoolClient',
  ],
} satisfies RouteRow;

export const authRegisterText = {
  of: authRegister,
  tag: 'auth',
  description:
    'Creates a user in the Cognito user pool (confirmed at once) and answers with an access token, as login would. The email must not be registered yet (409).',
  // A credential route's 401 says what was refused (lib/auth/cognito.ts), not the access token's text.
  problems: () => ({ 401: { code: 'unauthorized', detail: 'The email or password is wrong.' } }),
} satisfies RouteText;

export const authLogin = {
  id: 'auth.login',
  method: 'POST',
  path: '/auth/login',
  throttle: 'identity',
  entry: 'functions/auth/login.ts',
  logGroup: 'root',
  summary: 'Log in with email and password',
  access: { scope: 'public' },
  // InitiateAuth only answers tokens: nothing changed that a refusal would have to undo.
  rateLimitPlacement: 'beside',
  body: loginBody,
  success: { status: 200, schema: 'tokenResponse' },
  table: [],
  errors: [401],
  cognito: ['cognito-idp:AdminInitiateAuth', 'cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authLoginText = {
  of: authLogin,
  tag: 'auth',
  description:
    'Exchanges email and password for a Cognito access token. A wrong email or password gets the same 401, so accounts cannot be enumerated; an address that is not one, or a password outside 8 to 256 characters, is 400 on its shape alone, as at registration.',
  // A credential route's 401 says what was refused (lib/auth/cognito.ts), not the access token's text.
  problems: () => ({ 401: { code: 'unauthorized', detail: 'The email or password is wrong.' } }),
} satisfies RouteText;

export const authRefresh = {
  id: 'auth.refresh',
  method: 'POST',
  path: '/auth/refresh',
  throttle: 'identity',
  entry: 'functions/auth/refresh.ts',
  logGroup: 'root',
  summary: 'Exchange a refresh token for a new access token',
  // No bearer token: the refresh token in the body is the credential (as the password is for login).
  access: { scope: 'public' },
  // REFRESH_TOKEN_AUTH: a new access token for a refresh token, nothing changed either.
  rateLimitPlacement: 'beside',
  body: refreshBody,
  success: { status: 200, schema: 'tokenResponse' },
  table: [],
  errors: [401],
  // GetTokensFromRefreshToken evaluates no IAM; the client secret it takes is read from the pool.
  cognito: ['cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authRefreshText = {
  of: authRefresh,
  tag: 'auth',
  description:
    'Exchanges the `refresh_token` of register or login for a new access token. The answer has no `refresh_token`: Cognito issues none on refresh, so keep the one you have (valid 30 days unless revoked). A wrong, expired or revoked refresh token, or an access token sent instead of one, gets 401. No bearer token: the refresh token is the credential.',
  // A credential route's 401 says what was refused (lib/auth/cognito.ts), not the access token's text.
  problems: () => ({ 401: { code: 'unauthorized', detail: 'The refresh token is invalid, expired or revoked.' } }),
} satisfies RouteText;

export const authLogout = {
  id: 'auth.logout',
  method: 'POST',
  path: '/auth/logout',
  throttle: 'identity',
  entry: 'functions/auth/logout.ts',
  logGroup: 'root',
  summary: 'Log out: revoke a refresh token so that it can no longer be refreshed',
  access: { scope: 'public' },
  body: refreshBody,
  success: { status: 204 },
  table: [],
  errors: [401],
  // RevokeToken evaluates no IAM; the client secret it takes is read from the pool.
  cognito: ['cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authLogoutText = {
  of: authLogout,
  tag: 'auth',
  description:
    'Revokes the refresh token (Cognito RevokeToken): it can no longer be refreshed (401). Access tokens already issued are not recalled by this API: they are accepted until they expire (`expires_in`, one hour at most), so a client discards its own. A token Cognito will not revoke (unknown, malformed, not a refresh token) gets 401.',
  // A credential route's 401 says what was refused (lib/auth/cognito.ts), not the access token's text.
  problems: () => ({ 401: { code: 'unauthorized', detail: 'The refresh token is invalid, expired or revoked.' } }),
} satisfies RouteText;

export const authMe = {
  id: 'auth.me',
  method: 'GET',
  path: '/auth/me',
  entry: 'functions/auth/me.ts',
  summary: "The caller's account: id, email, display name and whether the address is verified",
  access: { scope: 'user' },
  success: { status: 200, schema: 'account' },
  table: ['dynamodb:BatchGetItem'],
  cognito: [],
} satisfies RouteRow;

export const authMeText = {
  of: authMe,
  tag: 'auth',
  description:
    "The caller's account. `email_verified` is false until the address is proven with `POST /auth/verify-email` (or a password reset); only verified accounts can be added to boards by email. A deleted account's token gets 401.",
} satisfies RouteText;

export const authVerifyEmailRequest = {
  id: 'auth.verify-email.request',
  method: 'POST',
  path: '/auth/verify-email/request',
  throttle: 'identity',
  entry: 'functions/auth/verify-email-request.ts',
  summary: "Mail a verification code to the caller's address",
  access: { scope: 'user' },
  success: { status: 202 },
  table: ['dynamodb:PutItem'], // the new code's tries
  cognito: [], // GetUserAttributeVerificationCode: authorized by the access token, no IAM
} satisfies RouteRow;

export const authVerifyEmailRequestText = {
  of: authVerifyEmailRequest,
  tag: 'auth',
  description:
    "Mails a verification code to the caller's address (Cognito's own mail; the local stack keeps it in its outbox, `GET /local/outbox?email=`, which only the local server serves). Answers 202 with no body.",
} satisfies RouteText;

export const authVerifyEmail = {
  id: 'auth.verify-email',
  method: 'POST',
  path: '/auth/verify-email',
  throttle: 'identity',
  entry: 'functions/auth/verify-email.ts',
  summary: "Verify the caller's address with the code mailed to it (400 invalid_code otherwise)",
  access: { scope: 'user' },
  // The account read before Cognito checks the code: a refused request leaves the code unused.
  rateLimitPlacement: 'inside',
  body: verifyEmailBody,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
  cognito: [], // VerifyUserAttribute: authorized by the access token, no IAM
} satisfies RouteRow;

export const authVerifyEmailText = {
  of: authVerifyEmail,
  tag: 'auth',
  description:
    'Verifies the address with the code mailed by `POST /auth/verify-email/request`. A wrong, expired or used code gets 400 with `code` `invalid_code`, and changes nothing.',
} satisfies RouteText;

export const authPasswordForgot = {
  id: 'auth.password.forgot',
  method: 'POST',
  path: '/auth/password/forgot',
  throttle: 'identity',
  entry: 'functions/auth/password-forgot.ts',
  summary: 'Mail a password reset code to the address, if an account holds it (always 202)',
  access: { scope: 'public' },
  // The account (or the address's owner) read, then Cognito: the count beside the read.
  rateLimitPlacement: 'inside',
  body: forgotPasswordBody,
  success: { status: 202 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'],
  // ForgotPassword evaluates no IAM but needs the client secret; an unproven address's attribute is set first.
  cognito: ['cognito-idp:AdminUpdateUserAttributes', 'cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authPasswordForgotText = {
  of: authPasswordForgot,
  tag: 'auth',
  description:
    'Mails a password reset code to the address if an account holds it, also when that account never verified it (the owner of the mailbox can take the account back). Always 202 with no body, whether or not an account holds the address: nothing tells which.',
} satisfies RouteText;

export const authPasswordReset = {
  id: 'auth.password.reset',
  method: 'POST',
  path: '/auth/password/reset',
  throttle: 'identity',
  entry: 'functions/auth/password-reset.ts',
  summary: 'Set a new password with the mailed code; verifies the address and revokes every refresh token',
  access: { scope: 'public' },
  // The address's owner read before Cognito checks the code: a refused request leaves the code
  // unused and the password as it was.
  rateLimitPlacement: 'inside',
  body: resetPasswordBody,
  success: { status: 204 },
  // The account's personal tokens deleted too: listed (Query), deleted with the count in one
  // transaction, their sockets handed to the sweeper (Update, Put, Delete of its entries).
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:PutItem'],
  // ConfirmForgotPassword evaluates no IAM but needs the client secret.
  cognito: ['cognito-idp:AdminUserGlobalSignOut', 'cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authPasswordResetText = {
  of: authPasswordReset,
  tag: 'auth',
  description:
    'Sets a new password with the code mailed by `POST /auth/password/forgot`. The address then counts as verified (the code proved it) and every refresh token of the account stops working; access tokens already issued stay valid until they expire. A wrong, expired or used code, and an address no account holds, get the same 400 `invalid_code`.',
} satisfies RouteText;

export const authPasswordChange = {
  id: 'auth.password.change',
  method: 'POST',
  path: '/auth/password',
  throttle: 'identity',
  entry: 'functions/auth/password-change.ts',
  summary: "Change the caller's password (403 wrong_password); revokes every refresh token, the caller's too",
  access: { scope: 'user' },
  // The account (or the address's owner) read, then Cognito: the count beside the read.
  rateLimitPlacement: 'inside',
  body: changePasswordBody,
  success: { status: 204 },
  // The account's personal tokens deleted too, as by a reset.
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  errors: [403],
  // The password is checked with AdminInitiateAuth; ChangePassword is authorized by the access token.
  cognito: ['cognito-idp:AdminInitiateAuth', 'cognito-idp:AdminUserGlobalSignOut', 'cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authPasswordChangeText = {
  of: authPasswordChange,
  tag: 'auth',
  description:
    "Replaces the caller's password. A wrong current password gets 403 `wrong_password` and changes nothing. Every refresh token of the account stops working, the caller's own included: sign in again with the new password.",
} satisfies RouteText;

export const authAccountDelete = {
  id: 'auth.account.delete',
  method: 'DELETE',
  path: '/auth/account',
  throttle: 'identity',
  entry: 'functions/auth/account-delete.ts',
  summary: "Delete the caller's account: it leaves every board, its boards owned alone are deleted",
  access: { scope: 'user' },
  // The account (or the address's owner) read, then Cognito: the count beside the read.
  rateLimitPlacement: 'inside',
  body: deleteAccountBody,
  success: { status: 204 },
  // The account's personal tokens deleted at once too (Query, then one transaction), their
  // sockets handed to the sweeper (UpdateItem).
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
  errors: [403],
  metric: 'AccountDeleted',
  cognito: ['cognito-idp:AdminInitiateAuth', 'cognito-idp:AdminDeleteUser', 'cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authAccountDeleteText = {
  of: authAccountDelete,
  tag: 'auth',
  description:
    "Deletes the caller's account (403 `wrong_password` for a wrong password). At once: the token reaches nothing, refresh tokens stop working and the address can register again. Then, in the background: the account leaves every board as a removal would (`member.removed`), and each board it owned alone is deleted with everything on it (`board.deleted`).",
} satisfies RouteText;

/**
 * Personal access tokens (docs/tokens.md): a session access token makes, lists and deletes them;
 * a personal token is refused here (403 insufficient_scope), as on every route its scopes do not
 * name (lib/rows/row.ts `personalTokenScopeOf`).
 */
export const authTokensCreate = {
  id: 'auth.tokens.create',
  method: 'POST',
  path: '/auth/tokens',
  entry: 'functions/auth/tokens-create.ts',
  summary: 'Create a personal access token for scripts and integrations (its text is shown once)',
  access: { scope: 'user' },
  // The memberships of `board_ids` read first, beside the count; the transaction waits for it.
  rateLimitPlacement: 'inside',
  body: createPersonalTokenBody,
  success: { status: 201, schema: 'personalTokenWithText' },
  // The memberships read; the profile's count, the token and the user's side in one transaction.
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  errors: [409],
  env: ['PERSONAL_TOKEN_DAY_SECONDS'],
  metric: 'PersonalTokenCreated',
  cognito: [],
} satisfies RouteRow;

export const authTokensCreateText = {
  of: authTokensCreate,
  tag: 'auth',
  description:
    "Creates a personal access token: send it as `Authorization: Bearer tbp_…` and it acts as its user, with the user's roles, on the routes its scopes allow (403 `insufficient_scope` elsewhere), until it expires or is deleted. Its text is in this answer only; the service keeps a hash. `board_ids` must name boards the caller is a member of (400). At most 20 tokens per user (409). Needs a session access token.",
  problems: () => ({
    409: {
      code: 'limit_reached',
      detail: 'A user holds at most 20 personal access tokens (expired ones included); delete one first.',
    },
  }),
} satisfies RouteText;

export const authTokensList = {
  id: 'auth.tokens.list',
  method: 'GET',
  path: '/auth/tokens',
  entry: 'functions/auth/tokens-list.ts',
  summary: "The caller's personal access tokens, newest first (never their text)",
  access: { scope: 'user' },
  success: { status: 200, schema: 'personalTokenList' },
  // The user's side of the tokens (Query), then their items for the last use (BatchGetItem).
  table: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
  cognito: [],
} satisfies RouteRow;

export const authTokensListText = {
  of: authTokensList,
  tag: 'auth',
  description:
    "The caller's personal access tokens, newest first, expired ones included until deleted; `last_used_at` is at most 60 s behind. A token's text is never shown again. Needs a session access token.",
} satisfies RouteText;

export const authTokensDelete = {
  id: 'auth.tokens.delete',
  method: 'DELETE',
  path: '/auth/tokens/{id}',
  entry: 'functions/auth/tokens-delete.ts',
  summary: 'Delete one of your personal access tokens: refused from the next request on',
  access: { scope: 'user' },
  // The token read first, beside the count; the deletion waits for it.
  rateLimitPlacement: 'inside',
  params: idParams,
  success: { status: 204 },
  // The token read; both its items and the count in one transaction; then the sockets it opened
  // found (Query) and handed to the sweeper (their expiry moved: Update, Put and Delete of entries).
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:Query', 'dynamodb:PutItem'],
  errors: [404],
  cognito: [],
} satisfies RouteRow;

export const authTokensDeleteText = {
  of: authTokensDelete,
  tag: 'auth',
  description:
    "Deletes a personal access token of the caller: every later request with it gets 401, and a socket it opened is closed (`token.expired`) within 60 s. Another user's token id, or an unknown one, gets 404. Needs a session access token.",
} satisfies RouteText;

/**
 * The function the user pool invokes to write its mail: it gives each message that carries a code
 * the subject of its purpose (lib/auth/messages.ts); it reads nothing and calls nothing, so it is
 * granted nothing and has no pool settings in its environment (a trigger that names its pool
 * would make the pool and the function depend on each other).
 */
export const authMessage = {
  id: 'auth.message',
  entry: 'functions/auth/message.ts',
  summary: "Names each code message's purpose in its subject: address verification or password reset",
  trigger: 'CustomMessage',
  table: [],
  cognito: [],
  // Cognito waits 5 s for a trigger, and a longer run would only be a failed message.
  timeoutSeconds: 5,
} satisfies PoolTriggerRow;
