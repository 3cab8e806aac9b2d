import { WrongPassword } from '../domain/errors';
import { BoardChanged, deleteBoardAs } from './boards';
import { deleteItems, getItems, LostRace, queryAll, refusalOf, retryLostRaces, transactNamed } from './db';
import { removeDeletedMember } from './members';
import type { BoardRecord, MemberRecord } from './records';
import { type ItemKey, keyHash, keys } from './table';
import { accountGone, type UserProfile } from './users';

/**
 * Account deletion (docs/accounts.md). The request does what must hold at once, in one
 * transaction: the profile and the email item go (the address can register again, member-add no
 * longer finds it, and every route that reads the caller's profile stops answering for the
 * account), and the deletion's marker is written. The marker's stream record starts the account
 * collector (lib/stream/accounts.ts), which then leaves every board, deletes the boards the
 * account owned alone, closes its sockets and removes its tickets and idempotency records, with
 * the event source's retries: however many boards the account is on, no request waits for it.
 */
interface AccountDeletion {
  user_id: string;
  email: string;
  requested_at: string;
}

/**
 * Whose address a deletion must check the password of: the profile's, or, on a retry after the
 * transaction below succeeded but the rest did not, the marker's. Neither: the account is gone.
 */
export async function accountToDelete(userId: string): Promise<{ email: string; begun: boolean }> {
  const found = await getItems([keys.userProfile(userId), keys.accountDeletion(userId)]);
  const profile = found.get<UserProfile>(keys.userProfile(userId));
  if (profile) return { email: profile.email, begun: false };
  const marker = found.get<AccountDeletion>(keys.accountDeletion(userId));
  if (marker) return { email: marker.email, begun: true };
  throw accountGone();
}

/** The request's transaction: profile and email item gone, the marker written. */
export async function beginAccountDeletion(userId: string, email: string): Promise<void> {
  const marker: AccountDeletion = { user_id: userId, email, requested_at: new Date().toISOString() };
  try {
    await transactNamed({
      profile: { Delete: { Key: keys.userProfile(userId), ConditionExpression: 'attribute_exists(pk)' } },
      address: {
        Delete: {
          Key: keys.email(email),
          ConditionExpression: 'attribute_not_exists(pk) OR user_id = :user',
          ExpressionAttributeValues: { ':user': userId },
        },
      },
      marker: { Put: { Item: { ...keys.accountDeletion(userId), type: 'account_deletion', ...marker } } },
    });
  } catch (error) {
    // Another deletion of the same account got there first: the caller goes on as a retry would.
    if (refusalOf(error, ['profile', 'address', 'marker'] as const)?.failed.has('profile')) return;
    throw error;
  }
}

/** Wrong password on a deletion: 403 wrong_password, with nothing changed. */
export const wrongDeletionPassword = () => new WrongPassword('The password is wrong; the account was not deleted.');

/** What the collector finds of an account: its boards, open sockets and unused tickets. */
export interface AccountLeftovers {
  boards: string[];
  sockets: string[];
  tickets: string[];
  /** Every item of the user's partition, the marker included: removed last. */
  items: ItemKey[];
}

export async function accountLeftovers(userId: string): Promise<AccountLeftovers> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId) },
    ProjectionExpression: 'pk, sk',
  });
  const after = (sk: string, prefix: string) => (sk.startsWith(prefix) ? [sk.slice(prefix.length)] : []);
  return {
    boards: items.flatMap((item) => after(item.sk, keys.userBoardPrefix)),
    sockets: items.flatMap((item) => after(item.sk, keys.userSocketPrefix)),
    tickets: items.flatMap((item) => after(item.sk, keys.userTicketPrefix)),
    items: items.map(({ pk, sk }) => ({ pk, sk })),
  };
}

/**
 * The account leaves one board as a removal would (`member.removed`), or, when it is the board's
 * one owner, deletes the board (`board.deleted`; the board collector removes the rest). Both
 * writes are conditional on what was read, so a co-owner leaving or being deleted at the same
 * time makes this look again: the last owner to go deletes the board, never neither.
 */
export async function leaveBoardForGood(boardId: string, userId: string): Promise<void> {
  await retryLostRaces(async () => {
    const found = await getItems([keys.board(boardId), keys.member(boardId, userId)]);
    const board = found.get<BoardRecord>(keys.board(boardId));
    const member = found.get<MemberRecord>(keys.member(boardId, userId));
    if (!board || !member) {
      // Left already, or the board's deletion has begun (its own collector removes memberships).
      await deleteItems([keys.member(boardId, userId), keys.userBoard(userId, boardId)]);
      return;
    }
    try {
      if (member.role === 'owner' && (board.owner_count ?? 1) <= 1) await deleteBoardAs(boardId, userId, board, userId);
      else await removeDeletedMember(boardId, userId, member.role, board);
    } catch (error) {
      // The board no longer fits what was read (a co-owner came or went): look again.
      if (error instanceof BoardChanged) throw new LostRace();
      throw error;
    }
  });
}

/**
 * The rest, once the boards are left and the sockets closed: unused tickets, the idempotency
 * records of the account (its own, and its registration's, kept by the address), and the user's
 * partition, the marker last, so that an interrupted run starts again from the marker's record.
 */
export async function forgetAccount(userId: string, email: string, leftovers: AccountLeftovers): Promise<void> {
  const idempotency = await Promise.all(
    [userId, `account:${keyHash(email.toLowerCase())}`].map((owner) =>
      queryAll({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.idempotencyPartition(owner) },
        ProjectionExpression: 'pk, sk',
      }),
    ),
  );
  await deleteItems([
    ...leftovers.tickets.map(keys.ticket),
    ...idempotency.flat().map(({ pk, sk }) => ({ pk, sk })),
    ...leftovers.items.filter((key) => key.sk !== keys.accountDeletion(userId).sk),
  ]);
  await deleteItems([keys.accountDeletion(userId)]);
}
