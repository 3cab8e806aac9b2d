import { accountToDelete, beginAccountDeletion, wrongDeletionPassword } from '../data/accounts';
import {
  giveBackResetTry,
  giveBackVerifyTry,
  startResetTries,
  startVerifyTries,
  takeResetTry,
  takeVerifyTry,
} from '../data/code-tries';
import { revokePersonalTokens } from '../data/personal-tokens';
import { findUserByEmail, markAddressVerified, putUserProfile, readAccount } from '../data/users';
import { Conflict, InvalidCode, Unauthorized, WrongPassword } from '../domain/errors';
import {
  changePassword,
  checkPassword,
  confirmEmailCode,
  createUser,
  deleteIdentity,
  identityExists,
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

/**
 * POST /auth/register: a new Cognito user and its profile. An address still held by an account
 * whose Cognito identity is gone (deleted with its own token through Cognito's DeleteUser, around
 * this API) is taken back: that account is deleted as DELETE /auth/account deletes one, and the
 * registration goes on. Only a registration that would otherwise be refused pays for the check.
 */
export async function register(email: string, password: string, displayName: string): Promise<void> {
  await createUser(email, password, displayName, async (userId) => {
    try {
      await putUserProfile(userId, email, displayName);
    } catch (error) {
      if (!(error instanceof Conflict)) throw error;
      const holder = await findUserByEmail(email);
      // This registration's own profile, written by an attempt whose answer was lost and retried.
      if (holder?.user_id === userId) return;
      if (!holder || (await identityExists(holder.user_id))) throw error;
      await beginAccountDeletion(holder.user_id, holder.email);
      await putUserProfile(userId, email, displayName);
    }
  });
}

/**
 * POST /auth/verify-email/request: Cognito mails a new code to the caller's address, and only then
 * do its tries start again from none. When Cognito sends none (too many codes asked for), the
 * earlier code keeps the tries it has left: asking again never buys more guesses.
 */
export async function requestEmailVerification(caller: Caller): Promise<void> {
  if (await sendEmailCode(caller.token)) await startVerifyTries(caller.id);
}

/**
 * POST /auth/verify-email: the account read first (a deleted account's token gets its 401 here,
 * before the code is tried), then the gate, then one of the code's five tries is taken, then
 * Cognito checks the code and the table records the proven address. A request refused before the
 * try never reaches Cognito, so its code stays unused; once five tries are taken the code is void.
 */
export async function verifyEmail(caller: Caller, code: string, beforeChange: BeforeChange = nothing): Promise<void> {
  const account = await readAccount(caller.id);
  await beforeChange();
  if (!(await takeVerifyTry(caller.id))) throw new InvalidCode();
  await confirmEmailCode(caller.token, code).catch(giveBackUnlessJudged(() => giveBackVerifyTry(caller.id)));
  await markAddressVerified(caller.id, account.email);
}

/**
 * POST /auth/password/forgot: a reset code to whoever holds the address; the same answer whether
 * anyone does (sendResetCode says how an unproven address still gets its code).
 */
export async function forgotPassword(email: string, beforeChange: BeforeChange = nothing): Promise<void> {
  const account = await findUserByEmail(email);
  await beforeChange();
  // The tries start again only once a new code went out (see requestEmailVerification).
  const sent = await sendResetCode(email, account && { userId: account.user_id, verified: account.verified });
  if (account && sent) await startResetTries(email);
}

/**
 * POST /auth/password/reset: the code that came back proves the address, so the account is now
 * the mailbox owner's: new password, address verified, every refresh token of the account revoked
 * (whoever claimed the address before is signed out for good). The address's owner is read first,
 * beside the rate limiter's count, and the gate is awaited before Cognito sees the code: a refused
 * reset neither spends the code nor changes the password. An unknown address reads nothing and
 * Cognito answers it as before (the same 400 as a wrong code).
 */
export async function resetForgottenPassword(
  email: string,
  code: string,
  newPassword: string,
  beforeChange: BeforeChange = nothing,
): Promise<void> {
  const found = await findUserByEmail(email);
  await beforeChange();
  // Tries are counted per address, from wherever they come; an address nobody holds has no code.
  if (found && !(await takeResetTry(email))) throw new InvalidCode();
  await resetPassword(email, code, newPassword).catch(giveBackUnlessJudged(async () => found && giveBackResetTry(email)));
  // The password is the owner's of the address now, at the moment of the reset: if the address
  // changed hands since the read (its account deleted, the address registered again), the
  // marking's condition fails, and the owner is read again, as if read after the reset.
  const account = found && (await markedVerified(found.user_id, email)) ? found : await findUserByEmail(email);
  if (!account) return;
  if (account !== found) await markAddressVerified(account.user_id, email);
  // Whoever held the old password may hold its personal tokens too: they go with it.
  await Promise.all([revokePersonalTokens(account.user_id), signOutEverywhere(account.user_id)]);
}

/**
 * A try is spent only on a code Cognito judged (400 invalid_code): when the check failed for
 * another reason (Cognito throttled or unreachable, a new password it refuses), the try is given
 * back before the error goes on.
 */
const giveBackUnlessJudged = (giveBack: () => Promise<unknown>) => async (error: unknown) => {
  if (!(error instanceof InvalidCode)) await giveBack().catch(() => undefined);
  throw error;
};

/** markAddressVerified, answering false when the account no longer holds the address (deleted, or changed hands). */
async function markedVerified(userId: string, email: string): Promise<boolean> {
  try {
    await markAddressVerified(userId, email);
    return true;
  } catch (error) {
    if (error instanceof Unauthorized) return false;
    throw error;
  }
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
  await Promise.all([revokePersonalTokens(caller.id), signOutEverywhere(caller.id)]);
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
  // At once, not by the collector: the next request with one of its personal tokens gets 401.
  await revokePersonalTokens(caller.id, { profile: false });
  await deleteIdentity(caller.id);
}
