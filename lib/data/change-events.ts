import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { BoardEvent } from '../domain/events';
import type { StoredLogItem } from './event-log';
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

/** A log item's INSERT record (lib/data/event-log.ts): the only records that carry events. */
function logItemOf(record: ChangeRecord): (StoredLogItem & { pk: string }) | undefined {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== 'INSERT' || image?.type?.S !== 'event' || !image.seq?.N || !(image.event?.M || image.events?.L)) {
    return undefined;
  }
  return unmarshall(image) as StoredLogItem & { pk: string };
}

/** The events a log item holds, in order: one change's, or a batch's run. */
export const eventsOfLogItem = (item: StoredLogItem): BoardEvent[] => ('events' in item ? item.events : [item.event]);

/** A board's events in a batch of stream records, each with the record's sequence number (where a retry starts). */
export type BoardEventsOfBatch = Map<string, { event: BoardEvent; sequence: string }[]>;

/**
 * A batch's log-item records grouped by board, in the batch's order (which is each board's `seq`
 * order: one board's items share a partition, and the stream keeps a partition's order). Both
 * readers of the log's records, the sockets' broadcaster and the webhook fanout, start from it.
 */
export function eventsByBoard(records: ChangeRecord[]): BoardEventsOfBatch {
  const byBoard: BoardEventsOfBatch = new Map();
  for (const record of records) {
    const item = logItemOf(record);
    const boardId = item && boardIdOfPartition(item.pk);
    if (!item || !boardId) continue;
    const list = byBoard.get(boardId) ?? [];
    // A run's events share their record: a retry from it sends them all again (at least once).
    for (const event of eventsOfLogItem(item)) list.push({ event, sequence: record.dynamodb?.SequenceNumber ?? '' });
    byBoard.set(boardId, list);
  }
  return byBoard;
}

/** A deletion whose leftovers the collector removes after the answer. */
export type Deletion =
  | { kind: 'board.deleted'; boardId: string }
  | { kind: 'column.deleted'; boardId: string; columnId: string }
  | { kind: 'card.deleted'; boardId: string; cardId: string };

/**
 * The deletion a stream record announces, for the collector of a deleted board's or column's
 * items or a deleted card's comments: the log item's kind and, for a column or a card, its id. A
 * card's deletion counts only when its log item says the card had comments (`comment_count`,
 * beside the event: lib/data/cards.ts); one without has nothing to collect.
 */
export function deletionOfRecord(record: ChangeRecord): Deletion | undefined {
  const item = logItemOf(record);
  const boardId = item && boardIdOfPartition(item.pk);
  // A run holds no deletion the collector finishes (lib/data/event-log.ts keeps those alone).
  if (!item || !boardId || 'events' in item) return undefined;
  if (item.kind === 'board.deleted') return { kind: item.kind, boardId };
  const columnId = item.event.column_id;
  if (item.kind === 'column.deleted' && typeof columnId === 'string') return { kind: item.kind, boardId, columnId };
  const cardId = item.event.card_id;
  const comments = (item as { comment_count?: unknown }).comment_count;
  if (item.kind === 'card.deleted' && typeof cardId === 'string' && typeof comments === 'number' && comments > 0) {
    return { kind: item.kind, boardId, cardId };
  }
  return undefined;
}

/** The account deletion a stream record announces (its marker's INSERT, lib/data/accounts.ts). */
export function accountDeletionOfRecord(record: ChangeRecord): { userId: string; email: string } | undefined {
  const image = record.dynamodb?.NewImage;
  const userId = image?.user_id?.S;
  const email = image?.email?.S;
  return image?.type?.S === 'account_deletion' && userId && email ? { userId, email } : undefined;
}
