import { accountToDelete, beginAccountDeletion, wrongDeletionPassword } from '../data/accounts';
import { findUserByEmail, markAddressVerified, readAccount } from '../data/users';
import { WrongPassword } from '../domain/errors';
import {
  changePassword,
  checkPassword,
  confirmEmailCode,
  deleteIdentity,
  resetPassword,
  sendEmailCode,
  sendResetCode,
  signOutEverywhere,
} from './cognito';
import type { Caller } from './verifier';

/**
 * The account routes' work (docs/accounts.md): Cognito mails and checks the codes and holds the
 * passwords; the table holds what the service trusts (a proven address) and what goes with an
 * account. One function per route that calls Cognito, so that each handler makes one call
 * (GET /auth/me reads the table only: lib/data/users.ts `readAccount`).
 */

/**
 * What a route awaits after its first read and before its first call that changes something (or
 * is counted by Cognito, as a password check is): the rate limiter's gate (lib/http/rate-limit.ts
 * `countGate`), so that the count runs beside the read and a refused request changes nothing.
 */
export type BeforeChange = () => Promise<void>;
const nothing: BeforeChange = async () => {};

/** POST /auth/verify-email/request: Cognito mails a code to the caller's address. */
export const requestEmailVerification = (caller: Caller): Promise<void> => sendEmailCode(caller.token);

/** POST /auth/verify-email: Cognito checks the code, then the table records the proven address. */
export async function verifyEmail(caller: Caller, code: string): Promise<void> {
  await confirmEmailCode(caller.token, code);
  const account = await readAccount(caller.id);
  await markAddressVerified(caller.id, account.email);
}

/**
 * POST /auth/password/forgot: a reset code to whoever holds the address; the same answer whether
 * anyone does (sendResetCode says how an unproven address still gets its code).
 */
export async function forgotPassword(email: string, beforeChange: BeforeChange = nothing): Promise<void> {
  const account = await findUserByEmail(email);
  await beforeChange();
  await sendResetCode(email, account && { userId: account.user_id, verified: account.verified });
}

/**
 * POST /auth/password/reset: the code that came back proves the address, so the account is now
 * the mailbox owner's: new password, address verified, every refresh token of the account revoked
 * (whoever claimed the address before is signed out for good).
 */
export async function resetForgottenPassword(email: string, code: string, newPassword: string): Promise<void> {
  await resetPassword(email, code, newPassword);
  const account = await findUserByEmail(email);
  if (!account) return;
  await markAddressVerified(account.user_id, email);
  await signOutEverywhere(account.user_id);
}

/** POST /auth/password: the current password checked, the new one set, every refresh token revoked. */
export async function changeMyPassword(
  caller: Caller,
  current: string,
  next: string,
  beforeChange: BeforeChange = nothing,
): Promise<void> {
  const account = await readAccount(caller.id);
  await beforeChange();
  await checkPassword(account.email, current).catch((error: unknown) => {
    throw error instanceof WrongPassword ? new WrongPassword('The current password is wrong; nothing was changed.') : error;
  });
  await changePassword(caller.token, current, next);
  await signOutEverywhere(caller.id);
}

/**
 * DELETE /auth/account: the password checked, then the table's part in one transaction (the
 * account unreachable, its address free; the account collector does the rest), then the Cognito
 * identity deleted (its refresh tokens with it). A retry after a failure between the two finds the
 * marker and finishes.
 */
export async function deleteMyAccount(caller: Caller, password: string, beforeChange: BeforeChange = nothing): Promise<void> {
  const { email, begun } = await accountToDelete(caller.id);
  await beforeChange();
  await checkPassword(email, password).catch((error: unknown) => {
    throw error instanceof WrongPassword ? wrongDeletionPassword() : error;
  });
  if (!begun) await beginAccountDeletion(caller.id, email);
  await deleteIdentity(caller.id);
}
