import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BadRequest, LimitReached, NotFound, Unauthorized } from '../domain/errors';
import { MAX_PERSONAL_TOKENS, newPersonalTokenText, type PersonalTokenScope } from '../domain/personal-tokens';
import { nowSeconds } from './changes';
import {
  deleteItems,
  documentClient,
  getItems,
  isConditionFailure,
  type NamedItems,
  namesOf,
  queryAll,
  refusalOf,
  tableName,
  transactNamed,
} from './db';
import type { TokenItem } from './personal-token-lookup';
import { expireTokenSockets } from './sockets';
import { keyHash, keys, TTL_ATTRIBUTE } from './table';
import { accountGone } from './users';

/**
 * Personal access tokens (docs/tokens.md). The table never holds a token's text: a request finds
 * its token by the text's SHA-256 (`TOKEN#<hash>`, one read), and the user's side
 * (`USER#<id>/TOKEN#<id>`) lists them and names the hash, so that a deletion removes both in one
 * transaction. The profile's `token_count`, moved in the same transactions, caps them race-free.
 */
export interface PersonalToken {
  id: string;
  name: string;
  scopes: PersonalTokenScope[];
  board_ids: string[] | null;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
}

/** The user's side: what the list answers, and the hash that finds the other item. */
interface UserTokenItem extends Omit<PersonalToken, 'last_used_at'> {
  token_hash: string;
}

/** An expired token's item stays a day for nobody, then DynamoDB's TTL removes it. */
const KEEP_AFTER_EXPIRY_SECONDS = 24 * 60 * 60;
const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

export interface NewPersonalToken {
  name: string;
  scopes: PersonalTokenScope[];
  expiresInDays: number;
  boardIds: string[] | null;
}

/**
 * Creates a token for the user: its boards checked first (each must be one the user is a member of
 * now: 400 naming the field), then one transaction: the profile's count taken (409 at the cap; a
 * deleted account: 401), the token's item and the user's side. Answers the token with its text,
 * the one time it is shown.
 */
export async function createPersonalToken(
  userId: string,
  request: NewPersonalToken,
  daySeconds: number,
  beforeChange: () => Promise<void>,
  sessionIssuedAt: number,
): Promise<PersonalToken & { token: string }> {
  const boardIds = request.boardIds && [...new Set(request.boardIds)];
  if (boardIds) {
    const found = await getItems(boardIds.map((boardId) => keys.member(boardId, userId)));
    const outside = boardIds.filter((boardId) => !found.get(keys.member(boardId, userId)));
    if (outside.length > 0) {
      const detail = `Every board of board_ids must be one you are a member of; not: ${outside.join(', ')}.`;
      throw new BadRequest(detail, [{ path: 'board_ids', message: 'must name boards the caller is a member of' }]);
    }
  }
  await beforeChange();
  const text = newPersonalTokenText();
  const tokenHash = keyHash(text);
  const createdAt = nowSeconds();
  const expiresAt = createdAt + request.expiresInDays * daySeconds;
  const token: PersonalToken = {
    id: randomUUID(),
    name: request.name,
    scopes: request.scopes,
    board_ids: boardIds,
    created_at: iso(createdAt),
    expires_at: iso(expiresAt),
    last_used_at: null,
  };
  const tokenItem: TokenItem = {
    id: token.id,
    user_id: userId,
    scopes: token.scopes,
    board_ids: boardIds,
    expires_at: expiresAt,
  };
  const { last_used_at: _unused, ...listed } = token;
  const userItem: UserTokenItem = { ...listed, token_hash: tokenHash };
  const items = {
    profile: {
      Update: {
        Key: keys.userProfile(userId),
        UpdateExpression: 'ADD token_count :one',
        // The session must be younger than the password's last change or reset: one stolen
        // before it cannot mint a token that outlives it, even in flight while the tokens are
        // revoked (the revocation stamps the profile first, then lists what to delete).
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(token_count) OR token_count < :max) AND (attribute_not_exists(sessions_revoked_at) OR sessions_revoked_at <= :issuedAt)',
        ExpressionAttributeValues: { ':one': 1, ':max': MAX_PERSONAL_TOKENS, ':issuedAt': sessionIssuedAt },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    token: {
      Put: {
        Item: {
          ...keys.personalToken(tokenHash),
          type: 'personal_token',
          ...tokenItem,
          [TTL_ATTRIBUTE]: expiresAt + KEEP_AFTER_EXPIRY_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    mine: { Put: { Item: { ...keys.userToken(userId, token.id), type: 'user_token', ...userItem } } },
  } satisfies NamedItems;
  try {
    await transactNamed(items);
  } catch (error) {
    const refusal = refusalOf(error, ['profile', 'token', 'mine'] as const);
    if (refusal?.failed.has('profile')) {
      const profile = refusal.itemAt<{ sessions_revoked_at?: number }>('profile');
      if (!profile) throw accountGone();
      if ((profile.sessions_revoked_at ?? 0) > sessionIssuedAt) {
        throw new Unauthorized('This session began before the password was last changed: sign in again.', true);
      }
      throw new LimitReached(
        `A user holds at most ${MAX_PERSONAL_TOKENS} personal access tokens (expired ones included); delete one first.`,
      );
    }
    throw error;
  }
  return { ...token, token: text };
}

/** The user's tokens, newest first (then by id), each with its last use; never a token's text. */
export async function listPersonalTokens(userId: string): Promise<PersonalToken[]> {
  const mine = (await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':prefix': keys.userTokenPrefix },
  })) as unknown as UserTokenItem[];
  // The last use is kept on the item each request reads, so that recording it touches one item.
  const found = mine.length > 0 ? await getItems(mine.map((item) => keys.personalToken(item.token_hash))) : undefined;
  return mine
    .map((item): PersonalToken => {
      const used = found?.get<TokenItem>(keys.personalToken(item.token_hash))?.last_used_at;
      return {
        id: item.id,
        name: item.name,
        scopes: item.scopes,
        board_ids: item.board_ids ?? null,
        created_at: item.created_at,
        expires_at: item.expires_at,
        last_used_at: used === undefined ? null : iso(used),
      };
    })
    .sort((a, b) => (a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.id < b.id ? -1 : 1));
}

/**
 * Deletes one of the user's tokens: both its items and one off the count, in one transaction, then
 * the sockets it opened are given to the sweeper. Another user's token, or an unknown id: 404.
 */
export async function deletePersonalToken(userId: string, tokenId: string, beforeChange: () => Promise<void>): Promise<void> {
  const key = keys.userToken(userId, tokenId);
  const item = (await getItems([key])).get<UserTokenItem>(key);
  if (!item) throw new NotFound('Personal access token');
  await beforeChange();
  const items = deletionOf(userId, [item], true);
  try {
    await transactNamed(items);
  } catch (error) {
    // Deleted meanwhile (another request, a revocation): gone either way.
    if (refusalOf(error, namesOf(items))?.failed.has('mine0')) throw new NotFound('Personal access token');
    throw error;
  }
  await expireTokenSockets(userId, [tokenId]);
}

/** Both items of each token, and (while the profile exists) the count lowered by as many. */
function deletionOf(userId: string, tokens: Pick<UserTokenItem, 'id' | 'token_hash'>[], profile: boolean): NamedItems {
  const items: Record<string, NamedItems[string]> = {};
  tokens.forEach((token, i) => {
    items[`mine${i}`] = { Delete: { Key: keys.userToken(userId, token.id), ConditionExpression: 'attribute_exists(pk)' } };
    items[`token${i}`] = { Delete: { Key: keys.personalToken(token.token_hash) } };
  });
  if (profile) {
    items.profile = {
      Update: {
        Key: keys.userProfile(userId),
        UpdateExpression: 'ADD token_count :less',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':less': -tokens.length },
      },
    };
  }
  return items;
}

/** The user's tokens as its side lists them: ids and hashes. */
async function tokensOf(userId: string): Promise<Pick<UserTokenItem, 'id' | 'token_hash'>[]> {
  return (await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':prefix': keys.userTokenPrefix },
    ProjectionExpression: 'id, token_hash',
  })) as unknown as Pick<UserTokenItem, 'id' | 'token_hash'>[];
}

const REVOKE_ATTEMPTS = 5;

/**
 * Deletes every token of the account (a password changed or reset, the account deleted): the list
 * read, then one transaction for all of them (20 tokens are 41 items, within a transaction's 100);
 * a token deleted meanwhile makes it read again. `profile`: false once the profile is gone
 * (a deletion), whose count then goes with it. Their sockets are then given to the sweeper.
 */
export async function revokePersonalTokens(userId: string, { profile = true }: { profile?: boolean } = {}): Promise<void> {
  // First the stamp that refuses new tokens to the sessions from before (createPersonalToken),
  // then the list: a create racing this either committed before the stamp, and is listed, or
  // meets it. Whole seconds, as a session's `iat`: one issued in the same second still passes.
  if (profile) await stampSessionsRevoked(userId);
  for (let attempt = 1; ; attempt++) {
    const tokens = await tokensOf(userId);
    if (tokens.length === 0) return;
    const items = deletionOf(userId, tokens, profile);
    try {
      await transactNamed(items);
    } catch (error) {
      // A token deleted meanwhile (its route, another revocation): list them again.
      const failed = refusalOf(error, namesOf(items))?.failed ?? new Set<string>();
      if (![...failed].some((name) => name.startsWith('mine')) || attempt >= REVOKE_ATTEMPTS) throw error;
      continue;
    }
    await expireTokenSockets(
      userId,
      tokens.map((token) => token.id),
    );
    return;
  }
}

/** Marks every session issued before now as unable to mint personal tokens (a deleted profile needs none). */
async function stampSessionsRevoked(userId: string): Promise<void> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.userProfile(userId),
        UpdateExpression: 'SET sessions_revoked_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': nowSeconds() },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/**
 * The account collector's share of a deleted account: the items by hash of any token its user side
 * still names (one made while the deletion began, or an account deleted at registration because
 * its identity was gone), so that none outlives the account. The user side goes with the partition.
 */
export async function forgetPersonalTokens(userId: string): Promise<void> {
  const tokens = await tokensOf(userId);
  if (tokens.length > 0) await deleteItems(tokens.map((token) => keys.personalToken(token.token_hash)));
}
