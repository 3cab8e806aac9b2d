import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { BoardEvent, ChangeStamp } from '../domain/events';
import { STAMP_ATTRIBUTE } from './changes';
import {
  type BoardRecord,
  type CardRecord,
  type ColumnRecord,
  type LabelRecord,
  type LiveLabels,
  toBoard,
  toCard,
  toColumn,
  toLabel,
} from './records';
import { boardIdOfPartition } from './table';

/** The part of a DynamoDB stream record the events are made from (Lambda's and the local poller's shape). */
export interface ChangeRecord {
  eventName?: 'INSERT' | 'MODIFY' | 'REMOVE' | string;
  dynamodb?: {
    NewImage?: Record<string, AttributeValue>;
    OldImage?: Record<string, AttributeValue>;
    SequenceNumber?: string;
  };
}

/** The board a stamped record is about, or undefined for any record that is no event of its own. */
export function boardOfRecord(record: ChangeRecord): string | undefined {
  if (record.eventName !== 'INSERT' && record.eventName !== 'MODIFY') return undefined;
  const stampId = record.dynamodb?.NewImage?.[STAMP_ATTRIBUTE]?.M?.id?.S;
  if (!stampId || stampId === record.dynamodb?.OldImage?.[STAMP_ATTRIBUTE]?.M?.id?.S) return undefined;
  const pk = record.dynamodb?.NewImage?.pk?.S;
  return pk ? boardIdOfPartition(pk) : undefined;
}

/**
 * The deletion a stream record announces, for the collector of a deleted board's or column's
 * items: the stamp's kind and, for a column, its id (written with the stamp by the delete).
 */
export function deletionOfRecord(
  record: ChangeRecord,
): { kind: 'board.deleted'; boardId: string } | { kind: 'column.deleted'; boardId: string; columnId: string } | undefined {
  const image = record.dynamodb?.NewImage;
  const boardId = boardIdOfPartition(image?.pk?.S ?? '');
  const stamp = image?.[STAMP_ATTRIBUTE]?.M;
  const kind = stamp?.kind?.S as ChangeStamp['kind'] | undefined;
  if (!boardId) return undefined;
  if (kind === 'board.deleted') return { kind, boardId };
  const columnId = stamp?.data?.M?.column_id?.S;
  if (kind === 'column.deleted' && columnId) return { kind, boardId, columnId };
  return undefined;
}

/** The account deletion a stream record announces (its marker's INSERT, lib/data/accounts.ts). */
export function accountDeletionOfRecord(record: ChangeRecord): { userId: string; email: string } | undefined {
  const image = record.dynamodb?.NewImage;
  const userId = image?.user_id?.S;
  const email = image?.email?.S;
  return image?.type?.S === 'account_deletion' && userId && email ? { userId, email } : undefined;
}

/**
 * The event a stream record stands for, from the record alone, or undefined for a record that is
 * no change of its own (the stamp is the one an earlier record already carried). `labels` are the
 * board's live labels, read with its watchers: a card's label_ids are shown as the REST routes
 * show them.
 */
export function eventOfRecord(record: ChangeRecord, labels?: LiveLabels): BoardEvent | undefined {
  const boardId = boardOfRecord(record);
  if (!boardId) return undefined;
  const item = unmarshall(record.dynamodb!.NewImage!) as Record<string, unknown> & { type?: string; ev: ChangeStamp };
  const { id, kind, actor, at, data } = item.ev;
  return {
    type: kind,
    event_id: id,
    board_id: boardId,
    actor_id: actor,
    occurred_at: at,
    ...resourceOf(item, labels),
    ...data,
  };
}

/** The resource itself, in the view the REST routes return (nothing internal leaks). */
function resourceOf(item: Record<string, unknown> & { type?: string }, labels: LiveLabels): Record<string, unknown> {
  switch (item.type) {
    case 'card':
      return { card: toCard(item as unknown as CardRecord, labels) };
    case 'label':
      return { label: toLabel(item as unknown as LabelRecord) };
    case 'column':
      return { column: toColumn(item as unknown as ColumnRecord) };
    case 'board':
      return { board: toBoard(item as unknown as BoardRecord) };
    default:
      // Memberships and event items: the stamp's data holds the event's fields.
      return {};
  }
}
