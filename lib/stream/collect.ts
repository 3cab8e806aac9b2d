import type { DynamoDBBatchResponse } from 'aws-lambda';
import { deleteBoardContents } from '../data/boards';
import { type ChangeRecord, deletionOfRecord } from '../data/change-events';
import { deleteColumnCards } from '../data/columns';
import { deleteCardComments } from '../data/comments';
import { logger } from '../runtime/logger';

/**
 * What the collector does for each deletion event: the board's remaining items, the column's
 * cards (with their comments), or the card's comments. Records run one after another; the first
 * that fails is reported (with its sequence number) so that the event source runs the batch again
 * from it, and every step is safe to repeat, so an interrupted deletion finishes on the next attempt.
 */
export async function collectDeletions(records: ChangeRecord[]): Promise<DynamoDBBatchResponse> {
  for (const record of records) {
    const deletion = deletionOfRecord(record);
    try {
      if (deletion?.kind === 'board.deleted') await deleteBoardContents(deletion.boardId);
      else if (deletion?.kind === 'column.deleted') await deleteColumnCards(deletion.boardId, deletion.columnId);
      else if (deletion?.kind === 'card.deleted') await deleteCardComments(deletion.boardId, deletion.cardId);
    } catch (error) {
      logger.error('deletion not finished; it is run again from here', { ...deletion, error });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
}
