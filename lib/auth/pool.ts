/**
 * User pool rules shared by CDK (infra/task-board-stack.ts) and the local Cognito emulator
 * (infra/local/cognito.ts), so that local users obey the same policy as deployed ones.
 * The contract: passwords of 8 to 256 characters; the register schema enforces the maximum.
 */
export const passwordPolicy = {
  minLength: 8,
  requireLowercase: false,
  requireUppercase: false,
  requireDigits: false,
  requireSymbols: false,
} as const;

/** Access tokens live an hour; refresh tokens thirty days (Cognito defaults, stated once). */
export const tokenValidity = { accessTokenMinutes: 60, refreshTokenDays: 30 } as const;

/**
 * The pool takes no sign-ups of its own: the service creates every user (AdminCreateUser), so
 * Cognito's SignUp, open to anyone holding the app client id, answers NotAuthorizedException.
 */
export const selfSignUp = false;

/**
 * The API's app client, whose id every access token names (docs/accounts.md, "Cognito is no second
 * door"): a secret, so that no call Cognito answers for a bare client id (SignUp, InitiateAuth,
 * ForgotPassword, ConfirmForgotPassword, GetTokensFromRefreshToken, RevokeToken) works without it;
 * password sign-in only as the pool's administrator (ADMIN_USER_PASSWORD_AUTH, IAM-authorized),
 * and refresh tokens; no user enumeration; and of the user's attributes it may write only `name`,
 * which the service never reads (display names live in the table), so that an access token cannot
 * change the address (UpdateUserAttributes) that the service's account stands for.
 */
export const appClient = {
  adminUserPasswordAuth: true,
  refreshTokenAuth: true,
  generateSecret: true,
  preventUserExistenceErrors: true,
  writeAttributes: ['name'],
} as const;

/** The same, as Cognito's API spells it (the local emulator's pool is made with it). */
export const explicitAuthFlows = [
  ...(appClient.adminUserPasswordAuth ? ['ALLOW_ADMIN_USER_PASSWORD_AUTH' as const] : []),
  ...(appClient.refreshTokenAuth ? ['ALLOW_REFRESH_TOKEN_AUTH' as const] : []),
];

/**
 * The verification message of the pool: the deployed pool's (CDK's defaults for a pool that
 * verifies email, which is every pool that signs in by email) and the local pool's, whose outbox
 * shows the subject. Cognito would send it for address verification and password reset codes
 * alike; the pool's CustomMessage trigger gives each its own (lib/auth/messages.ts), so this one
 * remains only for a message the trigger leaves as it is.
 */
export const verificationMessage = {
  emailSubject: 'Verify your new account',
  emailBody: 'The verification code to your new account is {####}',
} as const;
