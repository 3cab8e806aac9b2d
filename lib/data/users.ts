import { Conflict, Unauthorized } from '../domain/errors';
import { getItems, type NamedItems, refusalOf, transactNamed, transactWrite } from './db';
import { now } from './records';
import { cancellationCodes } from './sdk-errors';
import { keys } from './table';

export interface UserProfile {
  user_id: string;
  email: string;
  display_name: string;
  created_at: string;
  /**
   * The address is proven: a code Cognito mailed to it came back (verification or reset). The
   * service's own record, which member-add trusts (docs/accounts.md); absent on profiles made
   * before verification existed, which counts as false.
   */
  email_verified?: boolean;
}

/**
 * The user's profile and the email's uniqueness item, together. Members are later found by
 * email and shown with their display name, which Cognito cannot list cheaply per board. Every
 * account starts unverified.
 */
export async function putUserProfile(userId: string, email: string, displayName: string): Promise<UserProfile> {
  const profile: UserProfile = {
    user_id: userId,
    email: email.toLowerCase(),
    display_name: displayName,
    created_at: now(),
    email_verified: false,
  };
  try {
    const writes = {
      profile: { Put: { Item: { ...keys.userProfile(userId), type: 'user', ...profile } } },
      address: {
        Put: {
          // The member routes find a user by email and show the name: one read, from this item.
          Item: {
            ...keys.email(email),
            type: 'email',
            user_id: userId,
            email: profile.email,
            display_name: displayName,
            verified: false,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR user_id = :user',
          ExpressionAttributeValues: { ':user': userId },
        },
      },
    } satisfies NamedItems;
    await transactNamed(writes);
  } catch (error) {
    if (refusalOf(error, ['profile', 'address'] as const)?.failed.has('address'))
      throw new Conflict('This email is already registered.');
    throw error;
  }
  return profile;
}

export type UserIdentity = Pick<UserProfile, 'user_id' | 'email' | 'display_name'> & { verified: boolean };

/** The account that holds this email (case-insensitive), verified or not, read strongly consistently. */
export async function findUserByEmail(email: string): Promise<UserIdentity | undefined> {
  const found = await getItems([keys.email(email)]);
  const item = found.get<UserIdentity>(keys.email(email));
  return item
    ? { user_id: item.user_id, email: item.email, display_name: item.display_name, verified: item.verified === true }
    : undefined;
}

export async function getProfiles(userIds: string[]): Promise<Map<string, UserProfile>> {
  const found = await getItems(userIds.map(keys.userProfile));
  const profiles = new Map<string, UserProfile>();
  for (const id of userIds) {
    const profile = found.get<UserProfile>(keys.userProfile(id));
    if (profile) profiles.set(id, profile);
  }
  return profiles;
}

/** What GET /auth/me answers. */
export interface Account {
  id: string;
  email: string;
  display_name: string;
  email_verified: boolean;
}

/** A token whose account is gone (deleted) reaches nothing: the same 401 as a token refused. */
export const accountGone = () => new Unauthorized('The access token is invalid or has expired.', true);

/** The caller's account from its profile; a deleted account's token gets 401. */
export async function readAccount(userId: string): Promise<Account> {
  const profile = (await getItems([keys.userProfile(userId)])).get<UserProfile>(keys.userProfile(userId));
  if (!profile) throw accountGone();
  return {
    id: profile.user_id,
    email: profile.email,
    display_name: profile.display_name,
    email_verified: profile.email_verified === true,
  };
}

/**
 * Records that the account's address is proven, on the profile and on the email item member-add
 * reads, in one transaction; both must still be this account's (a deletion racing it wins).
 */
export async function markAddressVerified(userId: string, email: string): Promise<void> {
  try {
    await transactWrite([
      {
        Update: {
          Key: keys.userProfile(userId),
          UpdateExpression: 'SET email_verified = :true',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':true': true },
        },
      },
      {
        Update: {
          Key: keys.email(email),
          UpdateExpression: 'SET verified = :true',
          ConditionExpression: 'user_id = :user',
          ExpressionAttributeValues: { ':true': true, ':user': userId },
        },
      },
    ]);
  } catch (error) {
    if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) throw accountGone();
    throw error;
  }
}
