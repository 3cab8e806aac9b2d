import type { ChangeStamp } from '../domain/events';
import { logger } from '../runtime/logger';
import { deleteBoardContents } from './boards';
import type { ChangeRecord } from './change-events';
import { deleteColumnCards } from './columns';
import { boardIdOfPartition } from './table';

/**
 * What the collector does for each deletion event: the board's remaining items, or the
 * column's cards. Records run one after another; the first that fails is reported (with its
 * sequence number) so that the event source runs the batch again from it, and every step is
 * safe to repeat, so an interrupted deletion finishes on the next attempt.
 */
export async function collectDeletions(
  records: (ChangeRecord & { dynamodb?: { SequenceNumber?: string } })[],
): Promise<{ batchItemFailures: { itemIdentifier: string }[] }> {
  for (const record of records) {
    const image = record.dynamodb?.NewImage;
    const boardId = boardIdOfPartition(image?.pk?.S ?? '');
    const kind = image?.ev?.M?.kind?.S as ChangeStamp['kind'] | undefined;
    try {
      if (boardId && kind === 'board.deleted') await deleteBoardContents(boardId);
      else if (boardId && kind === 'column.deleted') {
        const columnId = image?.ev?.M?.data?.M?.column_id?.S;
        if (columnId) await deleteColumnCards(boardId, columnId);
      }
    } catch (error) {
      logger.error('deletion not finished; it is run again from here', { boardId, kind, error });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
}
