import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PersonalTokenGrant, PersonalTokenScope } from '../domain/personal-tokens';
import { nowSeconds } from './changes';
import { documentClient, getItems, isConditionFailure, tableName } from './db';
import { keyHash, keys } from './table';

/**
 * What a request with a personal access token reads and writes (docs/tokens.md): apart from the
 * token routes' module (lib/data/personal-tokens.ts), so that every token function's bundle, which
 * holds this path, carries nothing else of them (no socket or revocation code).
 */

/** The item a request reads, by the hash of the token's text. */
export interface TokenItem {
  id: string;
  user_id: string;
  scopes: PersonalTokenScope[];
  board_ids: string[] | null;
  /** Epoch seconds: judged at every request (the `ttl` removes the item only some time after). */
  expires_at: number;
  /** Epoch seconds of the last use recorded (at most one write a minute). */
  last_used_at?: number;
}

/** A use is recorded at most once a minute per token: `last_used_at` is then at most 60 s behind. */
const LAST_USED_STEP_SECONDS = 60;

/**
 * The token a request presents, by the hash of its text: one strongly consistent read. Undefined
 * when there is none or it has expired (judged by its `expires_at`, whatever the TTL has removed).
 */
export async function findPersonalToken(
  text: string,
): Promise<{ userId: string; expiresAt: number; grant: PersonalTokenGrant; hash: string; lastUsedAt?: number } | undefined> {
  const hash = keyHash(text);
  const item = (await getItems([keys.personalToken(hash)])).get<TokenItem>(keys.personalToken(hash));
  if (!item || item.expires_at <= nowSeconds()) return undefined;
  return {
    userId: item.user_id,
    expiresAt: item.expires_at,
    grant: { tokenId: item.id, scopes: item.scopes, boardIds: item.board_ids ?? null },
    hash,
    lastUsedAt: item.last_used_at,
  };
}

/**
 * Records a use, at most once a minute per token: nothing is sent when the last one is recent, and
 * the condition keeps concurrent requests to one write. Never rejects: the use is a courtesy, not
 * part of the request (a failure is only logged by the caller's `onFailure`).
 */
export function recordPersonalTokenUse(
  hash: string,
  lastUsedAt: number | undefined,
  onFailure: (error: unknown) => void,
): Promise<void> | undefined {
  const at = nowSeconds();
  if (lastUsedAt !== undefined && lastUsedAt > at - LAST_USED_STEP_SECONDS) return undefined;
  return documentClient
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.personalToken(hash),
        UpdateExpression: 'SET last_used_at = :at',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(last_used_at) OR last_used_at <= :stepAgo)',
        ExpressionAttributeValues: { ':at': at, ':stepAgo': at - LAST_USED_STEP_SECONDS },
      }),
    )
    .then(
      () => undefined,
      (error: unknown) => {
        if (!isConditionFailure(error)) onFailure(error);
      },
    );
}
