import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { BoardEvent, ChangeStamp } from '../domain/events';
import { STAMP_ATTRIBUTE } from './changes';
import { type BoardRecord, type CardRecord, type ColumnRecord, toBoard, toCard, toColumn } from './records';
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

/**
 * The event a stream record stands for, from the record alone (no read), or undefined for a
 * record that is no change of its own (the stamp is the one an earlier record already carried).
 */
export function eventOfRecord(record: ChangeRecord): BoardEvent | undefined {
  if (record.eventName !== 'INSERT' && record.eventName !== 'MODIFY') return undefined;
  const image = record.dynamodb?.NewImage;
  if (!image?.[STAMP_ATTRIBUTE]) return undefined;
  const item = unmarshall(image) as Record<string, unknown> & { pk: string; type?: string; ev: ChangeStamp };
  const old = record.dynamodb?.OldImage?.[STAMP_ATTRIBUTE]?.M?.id?.S;
  if (old === item.ev.id) return undefined;
  const boardId = boardIdOfPartition(item.pk);
  if (!boardId) return undefined;
  const { id, kind, actor, at, data } = item.ev;
  return {
    type: kind,
    event_id: id,
    board_id: boardId,
    actor_id: actor,
    occurred_at: at,
    ...resourceOf(item),
    ...data,
  };
}

/** The resource itself, in the view the REST routes return (nothing internal leaks). */
function resourceOf(item: Record<string, unknown> & { type?: string }): Record<string, unknown> {
  switch (item.type) {
    case 'card':
      return { card: toCard(item as unknown as CardRecord) };
    case 'column':
      return { column: toColumn(item as unknown as ColumnRecord) };
    case 'board':
      return { board: toBoard(item as unknown as BoardRecord) };
    default:
      // Memberships and event items: the stamp's data holds the event's fields.
      return {};
  }
}
