import type { DynamoDBBatchResponse } from 'aws-lambda';
import { accountLeftovers, forgetAccount, leaveBoardForGood } from '../data/accounts';
import { accountDeletionOfRecord, type ChangeRecord } from '../data/change-events';
import { forgetPersonalTokens } from '../data/personal-tokens';
import { closeConnection } from '../data/sockets';
import { logger } from '../runtime/logger';
import { closeSocket } from '../socket/management';

/** Boards left at once: each is two or three round trips, and a board's writes are its own. */
const BOARDS_IN_PARALLEL = 10;

/**
 * What the account collector does for each deleted account (docs/accounts.md): every board left
 * as a removal would (`member.removed`) or, where the account was the one owner, deleted
 * (`board.deleted`); then its sockets closed, and its tickets, idempotency records and the
 * deletion's marker removed. Records run one after another; the first that fails is reported so
 * that the event source runs the batch again from it, and every step is safe to repeat.
 */
export async function collectAccounts(records: ChangeRecord[]): Promise<DynamoDBBatchResponse> {
  for (const record of records) {
    const deletion = accountDeletionOfRecord(record);
    if (!deletion) continue;
    try {
      await collectAccount(deletion.userId, deletion.email);
    } catch (error) {
      logger.error('account deletion not finished; it is run again from here', { userId: deletion.userId, error });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
}

async function collectAccount(userId: string, email: string): Promise<void> {
  const leftovers = await accountLeftovers(userId);
  for (let i = 0; i < leftovers.boards.length; i += BOARDS_IN_PARALLEL) {
    await Promise.all(leftovers.boards.slice(i, i + BOARDS_IN_PARALLEL).map((boardId) => leaveBoardForGood(boardId, userId)));
  }
  // API Gateway runs $disconnect for each, which forgets it too; forgetting it here does not wait on that.
  await Promise.all(
    leftovers.sockets.map(async (connectionId) => {
      await closeSocket(connectionId);
      await closeConnection(connectionId);
    }),
  );
  await forgetPersonalTokens(userId);
  await forgetAccount(userId, email, leftovers);
  logger.info('account deleted', { userId, boards: leftovers.boards.length, sockets: leftovers.sockets.length });
}
