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

/** The API's app client: password login and refresh tokens, no secret, no user enumeration. */
export const appClient = {
  userPasswordAuth: true,
  refreshTokenAuth: true,
  generateSecret: false,
  preventUserExistenceErrors: true,
} as const;

/** The same, as Cognito's API spells it (the local emulator's pool is made with it). */
export const explicitAuthFlows = [
  ...(appClient.userPasswordAuth ? ['ALLOW_USER_PASSWORD_AUTH' as const] : []),
  ...(appClient.refreshTokenAuth ? ['ALLOW_REFRESH_TOKEN_AUTH' as const] : []),
];

/**
 * The verification message of the pool: the deployed pool's (CDK's defaults for a pool that
 * verifies email, which is every pool that signs in by email) and the local pool's, whose outbox
 * shows the subject. Cognito sends it for address verification and password reset codes.
 */
export const verificationMessage = {
  emailSubject: 'Verify your new account',
  emailBody: 'The verification code to your new account is {####}',
} as const;
