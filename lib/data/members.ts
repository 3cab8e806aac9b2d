import { Conflict, Forbidden, NotFound } from '../domain/errors';
import { actorOf, type BoardScope } from './access';
import { eventItemPut, STAMP_ATTRIBUTE, stamp } from './changes';
import { getItems, type Item, LostRace, queryAll, type TransactItem, transactWrite } from './db';
import { type Member, type MemberRecord, now, type Role } from './records';
import { cancellationCodes } from './sdk-errors';
import { keys } from './table';
import { findUserByEmail, getProfiles, type UserProfile } from './users';

/**
 * Board members. Both sides of a membership (`BOARD#b/#MEMBER#u` and `USER#u/BOARD#b`) change in
 * one transaction. The board's `owner_count` changes in the same transaction as any role change,
 * with a condition that it stays at least 1, so no sequence of concurrent requests can leave a
 * board without an owner.
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
  try {
    await transactWrite([
      {
        Put: {
          Item: {
            ...keys.member(scope.boardId, user.user_id),
            type: 'member',
            ...member,
            [STAMP_ATTRIBUTE]: stamp('member.added', actorOf(scope), { member: added }),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      { Put: { Item: { ...keys.userBoard(user.user_id, scope.boardId), type: 'user_board', ...member } } },
      ownerCountChange(scope.boardId, role === 'owner' ? 1 : 0),
      // The account still holds the proven address: a deletion racing the add wins.
      {
        ConditionCheck: {
          Key: keys.email(email),
          ConditionExpression: 'user_id = :user AND verified = :true',
          ExpressionAttributeValues: { ':user': user.user_id, ':true': true },
        },
      },
    ]);
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes?.[0] === 'ConditionalCheckFailed') throw new Conflict('This user is already a member of the board.');
    if (codes?.[2] === 'ConditionalCheckFailed') throw new NotFound('Board');
    if (codes?.[3] === 'ConditionalCheckFailed') throw new NotFound('A registered user with this email');
    throw error;
  }
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
  const found = await getItems([memberKey, keys.userProfile(userId)]);
  const current = found.get<MemberRecord>(memberKey);
  if (!current) throw new NotFound('A member with this user id');
  const changed = view({ user_id: userId, role }, found.get<UserProfile>(keys.userProfile(userId)) ?? noProfile);
  if (current.role !== role) {
    const delta = role === 'owner' ? 1 : -1;
    try {
      await transactWrite([
        {
          Update: {
            Key: memberKey,
            UpdateExpression: 'SET #role = :role, ev = :ev',
            ConditionExpression: '#role = :current',
            ExpressionAttributeNames: { '#role': 'role' },
            ExpressionAttributeValues: {
              ':role': role,
              ':current': current.role,
              ':ev': stamp('member.updated', actorOf(scope), { member: changed }),
            },
          },
        },
        {
          Update: {
            Key: keys.userBoard(userId, scope.boardId),
            UpdateExpression: 'SET #role = :role',
            ExpressionAttributeNames: { '#role': 'role' },
            ExpressionAttributeValues: { ':role': role },
          },
        },
        ownerCountChange(scope.boardId, delta),
      ]);
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[2] === 'ConditionalCheckFailed') throw lastOwner();
      if (codes?.[0] === 'ConditionalCheckFailed') throw new Conflict('The member changed meanwhile; retry.');
      throw error;
    }
  }
  return changed;
}

const noProfile = { email: '', display_name: '' };

/** An owner removes anyone; a member removes only themselves (leaving). */
export async function removeMember(scope: BoardScope, userId: string): Promise<void> {
  if (scope.member.role !== 'owner' && scope.member.user_id !== userId) {
    throw new Forbidden('Only an owner may remove other members.');
  }
  const current = await readMember(scope.boardId, userId);
  try {
    await transactWrite([
      {
        Delete: {
          Key: keys.member(scope.boardId, userId),
          ConditionExpression: '#role = :current',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':current': current.role },
        },
      },
      { Delete: { Key: keys.userBoard(userId, scope.boardId) } },
      ownerCountChange(scope.boardId, current.role === 'owner' ? -1 : 0),
      eventItemPut(scope.boardId, stamp('member.removed', actorOf(scope), { user_id: userId })),
    ]);
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes?.[2] === 'ConditionalCheckFailed') throw lastOwner();
    if (codes?.[0] === 'ConditionalCheckFailed') throw new Conflict('The member changed meanwhile; retry.');
    throw error;
  }
}

/**
 * A member leaving for good, as their account is deleted (lib/data/accounts.ts): removeMember's
 * transaction by the leaving user, for the role read just before. A change meanwhile (their role,
 * or the board down to them as its one owner) is LostRace, for the caller to look again.
 */
export async function removeDeletedMember(boardId: string, userId: string, role: Role): Promise<void> {
  try {
    await transactWrite([
      {
        Delete: {
          Key: keys.member(boardId, userId),
          ConditionExpression: '#role = :current',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':current': role },
        },
      },
      { Delete: { Key: keys.userBoard(userId, boardId) } },
      ownerCountChange(boardId, role === 'owner' ? -1 : 0),
      eventItemPut(boardId, stamp('member.removed', userId, { user_id: userId })),
    ]);
  } catch (error) {
    if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) throw new LostRace();
    throw error;
  }
}

async function readMember(boardId: string, userId: string): Promise<MemberRecord> {
  const key = keys.member(boardId, userId);
  const member = (await getItems([key])).get<MemberRecord>(key);
  if (!member) throw new NotFound('A member with this user id');
  return member;
}

/** Owner count +1/-1 (never below 1), or a plain check that the board still exists. */
function ownerCountChange(boardId: string, delta: number): TransactItem {
  if (delta === 0) return { ConditionCheck: { Key: keys.board(boardId), ConditionExpression: 'attribute_exists(pk)' } };
  return {
    Update: {
      Key: keys.board(boardId),
      // The membership carries the change's event; the board's owner count is not one.
      UpdateExpression: 'ADD owner_count :delta REMOVE ev',
      ConditionExpression: delta < 0 ? 'owner_count > :one' : 'attribute_exists(pk)',
      ExpressionAttributeValues: delta < 0 ? { ':delta': delta, ':one': 1 } : { ':delta': delta },
    },
  };
}

const lastOwner = () => new Conflict('A board must keep at least one owner.');
