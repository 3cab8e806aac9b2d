import { Conflict } from '../domain/errors';
import { cancellationCodes, transactWrite } from './db';
import { now } from './records';
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
          Item: { ...keys.email(email), type: 'email', user_id: userId },
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
