import { Conflict } from '../domain/errors';
import { getItems, transactWrite } from './db';
import { now } from './records';
import { cancellationCodes } from './sdk-errors';
import { keys } from './table';

export interface UserProfile {
  user_id: string;
  email: string;
  display_name: string;
  created_at: string;
}

/**
 * The user's profile and the email's uniqueness item, together. Members are later found by
 * email and shown with their display name, which Cognito cannot list cheaply per board.
 */
export async function putUserProfile(userId: string, email: string, displayName: string): Promise<UserProfile> {
  const profile: UserProfile = { user_id: userId, email: email.toLowerCase(), display_name: displayName, created_at: now() };
  try {
    await transactWrite([
      { Put: { Item: { ...keys.userProfile(userId), type: 'user', ...profile } } },
      {
        Put: {
          // The member routes find a user by email and show the name: one read, from this item.
          Item: { ...keys.email(email), type: 'email', user_id: userId, email: profile.email, display_name: displayName },
          ConditionExpression: 'attribute_not_exists(pk) OR user_id = :user',
          ExpressionAttributeValues: { ':user': userId },
        },
      },
    ]);
  } catch (error) {
    if (cancellationCodes(error)?.[1] === 'ConditionalCheckFailed') throw new Conflict('This email is already registered.');
    throw error;
  }
  return profile;
}

export type UserIdentity = Pick<UserProfile, 'user_id' | 'email' | 'display_name'>;

/** The user registered with this email (case-insensitive), read strongly consistently. */
export async function findUserByEmail(email: string): Promise<UserIdentity | undefined> {
  const found = await getItems([keys.email(email)]);
  const item = found.get<UserIdentity>(keys.email(email));
  return item ? { user_id: item.user_id, email: item.email, display_name: item.display_name } : undefined;
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
