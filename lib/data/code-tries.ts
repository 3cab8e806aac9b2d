import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_CODE_TRIES } from '../domain/limits';
import { nowSeconds } from './changes';
import { documentClient, isConditionFailure, tableName } from './db';
import { type ItemKey, keys, TTL_ATTRIBUTE } from './table';

/**
 * How often the code mailed last may still be tried (docs/accounts.md, "Codes are guessed at most
 * five times"). Cognito checks the code; the service counts the tries itself, per account for
 * address verification and per address for a password reset, in one item each: a counter that
 * every try takes from before the code reaches Cognito, so tries that race each other, from any
 * number of client addresses, are counted exactly. A new code starts the count again.
 *
 * The item outlives the code it counts (Cognito's codes last at most 24 hours); its `ttl` removes
 * it a day after the last code was asked for.
 */
const KEEP_SECONDS = 2 * 24 * 3600;

/** A new code is about to be mailed: its tries start from none. */
async function startCodeTries(key: ItemKey): Promise<void> {
  await documentClient.send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...key, type: 'code_tries', tries: 0, [TTL_ATTRIBUTE]: nowSeconds() + KEEP_SECONDS },
    }),
  );
}

/**
 * Takes one try of the current code, answering false once MAX_CODE_TRIES were taken: the code is
 * void until a new one is asked for. One conditional write, so of any number of tries sent at
 * once exactly MAX_CODE_TRIES get through. No item yet (a code asked for before tries were
 * counted, or one whose item expired) counts from none.
 */
async function takeCodeTry(key: ItemKey): Promise<boolean> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET #type = :type, #ttl = if_not_exists(#ttl, :ttl) ADD tries :one',
        ConditionExpression: 'attribute_not_exists(tries) OR tries < :max',
        ExpressionAttributeNames: { '#type': 'type', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':type': 'code_tries',
          ':ttl': nowSeconds() + KEEP_SECONDS,
          ':one': 1,
          ':max': MAX_CODE_TRIES,
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Hands back a try taken for a check that never judged the code (never below none). */
async function giveBackTry(key: ItemKey): Promise<void> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'ADD tries :minus',
        ConditionExpression: 'tries > :none',
        ExpressionAttributeValues: { ':minus': -1, ':none': 0 },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** Address verification: tries are counted per account. */
export const startVerifyTries = (userId: string) => startCodeTries(keys.verifyCodeTries(userId));
export const takeVerifyTry = (userId: string) => takeCodeTry(keys.verifyCodeTries(userId));
export const giveBackVerifyTry = (userId: string) => giveBackTry(keys.verifyCodeTries(userId));

/** Password reset: tries are counted per address, whoever sends them. */
export const startResetTries = (email: string) => startCodeTries(keys.resetCodeTries(email));
export const takeResetTry = (email: string) => takeCodeTry(keys.resetCodeTries(email));
export const giveBackResetTry = (email: string) => giveBackTry(keys.resetCodeTries(email));
