import { Conflict, Forbidden, NotFound } from '../domain/errors';
import { actorOf, type BoardScope } from './access';
import { WRITE_ONLY } from './board-turns';
import { BoardChanged } from './boards';
import { getItems, type Item, type ItemSet, type NamedItems, queryAll } from './db';
import {
  type BoardItemChange,
  bothBoardChanges,
  type Change,
  ChangeRaceLost,
  changeRefusal,
  commitChange,
  retryChange,
  seqOf,
} from './event-log';
import { type BoardRecord, type Member, type MemberRecord, now, type Role } from './records';
import { cancellationCodes } from './sdk-errors';
import { type ItemKey, keys } from './table';
import { findUserByEmail, getProfiles, type UserProfile } from './users';
import {
  type CreatorLeaving,
  creatorLeaves,
  isSwitchOff,
  type SwitchOff,
  webhookKeysOf,
  webhooksVersionOf,
} from './webhook-creators';

/**
 * Board members. Both sides of a membership (`BOARD#b/#MEMBER#u` and `USER#u/BOARD#b`) change in
 * one transaction. The board's `owner_count` changes in the same transaction as any role change,
 * with a condition that it stays at least 1, so no sequence of concurrent requests can leave a
 * board without an owner.
 *
 * An owner who stops being one (made a member, removed, leaving, or deleting the account) takes
 * the webhooks that speak for them down in the same transaction (lib/data/webhook-creators.ts):
 * their items are read in the round trip that reads the member, and the change commits only if
 * nobody made or switched on a webhook meanwhile, so no event numbered after the change reaches one.
 */

const view = (member: Pick<MemberRecord, 'user_id' | 'role'>, profile: { email: string; display_name: string }): Member => ({
  user_id: member.user_id,
  email: profile.email,
  display_name: profile.display_name,
  role: member.role,
});

/**
 * Only an account whose address is proven can be added by it (docs/accounts.md): one that claimed
 * the address without proving it gets the very answer an address nobody registered gets.
 */
export async function addMember(scope: BoardScope, email: string, role: Role): Promise<Member> {
  const user = await findUserByEmail(email);
  if (!user?.verified) throw new NotFound('A registered user with this email');
  const member: MemberRecord = { board_id: scope.boardId, user_id: user.user_id, role, joined_at: now() };
  const added = view(member, user);
  const writes = {
    member: {
      Put: {
        Item: { ...keys.member(scope.boardId, user.user_id), type: 'member', ...member },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    userBoard: { Put: { Item: { ...keys.userBoard(user.user_id, scope.boardId), type: 'user_board', ...member } } },
    // The account still holds the proven address: a deletion racing the add wins.
    provenAddress: {
      ConditionCheck: {
        Key: keys.email(email),
        ConditionExpression: 'user_id = :user AND verified = :true',
        ExpressionAttributeValues: { ':user': user.user_id, ':true': true },
      },
    },
  } satisfies NamedItems;
  await retryChange({ board: scope.board, item: undefined, callsAfterTurn: WRITE_ONLY }, async ({ board }) => {
    try {
      await commitChange({
        boardId: scope.boardId,
        seen: board,
        kind: 'member.added',
        actor: actorOf(scope),
        fields: { member: added },
        writes,
        board: bothBoardChanges(ownerCountChange(role === 'owner' ? 1 : 0), memberMapChange(board, user.user_id, 'join')),
        // The board's member map built meanwhile (its first assignment): go again on the board as it now is.
        boardRefused: (current) => new ChangeRaceLost(current),
      });
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (refusal?.failed.has('member')) throw new Conflict('This user is already a member of the board.');
      if (refusal?.failed.has('provenAddress')) throw new NotFound('A registered user with this email');
      throw error;
    }
  });
  return added;
}

/** Members in the order they joined (then by user id), with their email and display name. */
export async function listMembers(scope: BoardScope): Promise<Member[]> {
  const members = (await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.boardPartition(scope.boardId), ':prefix': keys.memberPrefix },
  })) as unknown as (MemberRecord & Item)[];
  const profiles = await getProfiles(members.map((m) => m.user_id));
  return members
    .sort((a, b) => (a.joined_at < b.joined_at ? -1 : a.joined_at > b.joined_at ? 1 : a.user_id < b.user_id ? -1 : 1))
    .map((m) => view(m, profiles.get(m.user_id) ?? noProfile));
}

/**
 * The member and their profile come in one read, so the new view (the `member.updated` event's
 * payload) is known before the write and the answer needs no read after it.
 */
export async function changeRole(scope: BoardScope, userId: string, role: Role): Promise<Member> {
  const memberKey = keys.member(scope.boardId, userId);
  return retryChange({ board: scope.board, item: undefined }, async ({ board }) => {
    const demoting = role !== 'owner';
    const found = await getItems([memberKey, keys.userProfile(userId), ...(demoting ? webhookKeysOf(board) : [])]);
    const current = found.get<MemberRecord>(memberKey);
    if (!current) throw new NotFound('A member with this user id');
    const changed = view({ user_id: userId, role }, found.get<UserProfile>(keys.userProfile(userId)) ?? noProfile);
    if (current.role === role) return changed;
    const leaving = demoting && current.role === 'owner' ? creatorLeaves(board, userId, found) : undefined;
    const writes = {
      member: {
        Update: {
          Key: memberKey,
          UpdateExpression: 'SET #role = :role',
          ConditionExpression: '#role = :current',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':role': role, ':current': current.role },
        },
      },
      userBoard: {
        Update: {
          Key: keys.userBoard(userId, scope.boardId),
          UpdateExpression: 'SET #role = :role',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':role': role },
        },
      },
      ...leaving?.writes,
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId: scope.boardId,
        seen: board,
        kind: 'member.updated',
        actor: actorOf(scope),
        fields: { member: changed },
        writes,
        board: bothBoardChanges(ownerCountChange(role === 'owner' ? 1 : -1), leaving?.board),
        boardRefused: refusal(leaving),
      });
    } catch (error) {
      throw memberChangeFailure(error, writes, board);
    }
    return changed;
  });
}

const noProfile = { email: '', display_name: '' };

/** An owner removes anyone; a member removes only themselves (leaving). */
export async function removeMember(scope: BoardScope, userId: string): Promise<void> {
  if (scope.member.role !== 'owner' && scope.member.user_id !== userId) {
    throw new Forbidden('Only an owner may remove other members.');
  }
  await retryChange({ board: scope.board, item: undefined }, async ({ board }) => {
    const { member: current, found } = await readMember(scope.boardId, userId, webhookKeysOf(board));
    const change = removal(scope.boardId, userId, current.role, actorOf(scope), board, found);
    try {
      await commitChange(change);
    } catch (error) {
      throw memberChangeFailure(error, change.writes, board);
    }
  });
}

/**
 * A refused membership change, as the caller sees it: the member changed meanwhile (409); one of
 * the leaving owner's webhooks changed meanwhile (a lost race: read again); anything else as it is.
 */
function memberChangeFailure(error: unknown, writes: MembershipWrites, board: BoardRecord): unknown {
  const refusal = changeRefusal(error, writes);
  if (refusal?.failed.has('member')) return new Conflict('The member changed meanwhile; retry.');
  // The webhooks' switch-offs (the board and log items are answered inside commitChange).
  if ([...(refusal?.failed ?? [])].some(isSwitchOff)) return new ChangeRaceLost(refusal?.board ?? board);
  return error;
}

/**
 * The board condition of a membership change refused: by an owner leaving whose webhooks changed
 * meanwhile (`webhooks_version`: a lost race, read again), else by the last owner going.
 */
const refusal = (leaving: CreatorLeaving | undefined, seen?: BoardRecord) => (board: BoardRecord) =>
  (leaving && webhooksVersionChanged(leaving, board)) || memberMapBuiltSince(seen, board)
    ? new ChangeRaceLost(board)
    : lastOwner();

/** The board's member map was built (by its first assignment) after `seen` was read: a lost race. */
const memberMapBuiltSince = (seen: BoardRecord | undefined, board: BoardRecord) =>
  seen !== undefined && !seen.members && board.members !== undefined;

/**
 * A membership's removal (both sides, the owner count) with `member.removed`, by `actor`; an owner's
 * takes the webhooks that speak for them down with it (`found`: the board's webhooks as read).
 */
/** A membership change's writes: the member's two sides, and a leaving owner's webhook switch-offs. */
type MembershipWrites = NamedItems<'member' | 'userBoard' | SwitchOff>;

function removal(
  boardId: string,
  userId: string,
  role: Role,
  actor: string,
  board: BoardRecord,
  found?: ItemSet,
): Change<'member' | 'userBoard' | SwitchOff> {
  const leaving = role === 'owner' && found ? creatorLeaves(board, userId, found) : undefined;
  return {
    boardId,
    seen: board,
    kind: 'member.removed',
    actor,
    fields: { user_id: userId },
    writes: {
      member: {
        Delete: {
          Key: keys.member(boardId, userId),
          ConditionExpression: '#role = :current',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':current': role },
        },
      },
      userBoard: { Delete: { Key: keys.userBoard(userId, boardId) } },
      ...leaving?.writes,
    },
    board: bothBoardChanges(
      bothBoardChanges(ownerCountChange(role === 'owner' ? -1 : 0), leaving?.board),
      memberMapChange(board, userId, 'leave'),
    ),
    boardRefused: refusal(leaving, board),
  };
}

/**
 * A member leaving for good, as their account is deleted (lib/data/accounts.ts): removeMember's
 * transaction by the leaving user, for the role read just before. A change meanwhile (their role,
 * or the board down to them as its one owner) is LostRace, for the caller to look again.
 */
export async function removeDeletedMember(boardId: string, userId: string, role: Role, read: BoardRecord): Promise<void> {
  await retryChange({ board: read, item: undefined }, async ({ board }) => {
    // An owner's webhooks are read here (the account collector read board and member already): one
    // more round trip, on boards with webhooks only, in the background.
    const webhookKeys = role === 'owner' ? webhookKeysOf(board) : [];
    const found = webhookKeys.length > 0 ? await getItems(webhookKeys) : undefined;
    try {
      await commitChange({ ...removal(boardId, userId, role, userId, board, found), boardRefused: () => new BoardChanged() });
    } catch (error) {
      if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) throw new BoardChanged();
      throw error;
    }
  });
}

/** The member, and any other items wanted in the same round trip (the board's webhooks). */
async function readMember(
  boardId: string,
  userId: string,
  alsoKeys: ItemKey[],
): Promise<{ member: MemberRecord; found: ItemSet }> {
  const key = keys.member(boardId, userId);
  const found = await getItems([key, ...alsoKeys]);
  const member = found.get<MemberRecord>(key);
  if (!member) throw new NotFound('A member with this user id');
  return { member, found };
}

/** The board's part in a membership change: the member's entry in `members`, when the board has the map. */
function memberMapChange(board: BoardRecord, userId: string, change: 'join' | 'leave'): BoardItemChange {
  // A board from before assignees has no map until its first assignment builds it (lib/data/assignees.ts):
  // the change then requires it still absent, so a map built meanwhile is never left without it.
  if (!board.members) return { condition: 'attribute_not_exists(members)' };
  const names = { '#memberUser': userId };
  if (change === 'leave') return { remove: ['members.#memberUser'], names };
  // The member joins with the change's own seq: only assignments made after it count.
  return { set: ['members.#memberUser = :memberJoined'], names, values: { ':memberJoined': seqOf(board) + 1 } };
}

/** The board's part in a membership change: owner count +1/-1, never below 1. */
function ownerCountChange(delta: number): BoardItemChange | undefined {
  if (delta === 0) return undefined;
  return {
    add: ['owner_count :delta'],
    ...(delta < 0
      ? { condition: 'owner_count > :one', values: { ':delta': delta, ':one': 1 } }
      : { values: { ':delta': delta } }),
  };
}

const lastOwner = () => new Conflict('A board must keep at least one owner.');

const webhooksVersionChanged = (leaving: CreatorLeaving, board: BoardRecord) => webhooksVersionOf(board) !== leaving.version;
