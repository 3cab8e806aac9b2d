import { randomUUID } from 'node:crypto';
import type { BoardEventKind, ChangeStamp } from '../domain/events';
import { now } from './records';
import { keys, TTL_ATTRIBUTE } from './table';

/**
 * The change stamp (`ev`) every write that watchers must hear about leaves on its item, so that
 * the table's stream record alone becomes the event (lib/data/change-events.ts). Writes that must
 * not be heard (a board's counters) remove it (`REMOVE ev`), which also keeps their stream records
 * from invoking the broadcaster at all: its filter wants a stamp in the new image.
 */
export const STAMP_ATTRIBUTE = 'ev';

/**
 * The filter of the table stream's event source (CDK) and of the local poller: only records whose
 * new image carries a change stamp. Connection, watch and ticket items never carry one, removals
 * (a board's or column's children deleted in bulk, TTL expiry) have no new image, and counters on
 * the board item remove the stamp when they change, so none of them invokes the broadcaster.
 */
export const changeRecordFilter = {
  eventName: ['INSERT', 'MODIFY'],
  dynamodb: { NewImage: { [STAMP_ATTRIBUTE]: { M: { kind: { S: [{ exists: true }] } } } } },
} as const;

/**
 * The filter of the collector's event source: the event items of board and column deletions.
 * The request answers once the board or column is unreachable; the collector then removes what
 * was in it, with the event source's retries, so that a deletion of any size finishes.
 */
export const deletionRecordFilter = {
  eventName: ['INSERT'],
  dynamodb: {
    NewImage: { type: { S: ['event'] }, [STAMP_ATTRIBUTE]: { M: { kind: { S: ['board.deleted', 'column.deleted'] } } } },
  },
} as const;

/**
 * The filter of the account collector's event source: the marker an account deletion writes
 * (lib/data/accounts.ts). The request answers once the account is unreachable; the collector then
 * takes it off every board, with the event source's retries, however many boards that is.
 */
export const accountDeletionRecordFilter = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { type: { S: ['account_deletion'] } } },
} as const;

export function stamp(kind: BoardEventKind, actor: string, data?: Record<string, unknown>): ChangeStamp {
  return { id: randomUUID(), kind, actor, at: now(), ...(data ? { data } : {}) };
}

/** Event items outlive their stream record by a day at most: nothing reads them afterwards. */
const EVENT_ITEM_SECONDS = 24 * 60 * 60;
export const nowSeconds = () => Math.floor(Date.now() / 1000);
export const ttlIn = (seconds: number) => nowSeconds() + seconds;

/**
 * The Put of a deletion's event item, to go in the deleting transaction. A deleted item leaves
 * no new image to stamp, and its old image names the last writer, not the deleter; the event
 * item lives in the board's partition, so its record stays in order with the board's others.
 */
export function eventItemPut(boardId: string, change: ChangeStamp) {
  return {
    Put: {
      Item: {
        ...keys.boardEvent(boardId, change.id),
        type: 'event',
        board_id: boardId,
        [STAMP_ATTRIBUTE]: change,
        [TTL_ATTRIBUTE]: ttlIn(EVENT_ITEM_SECONDS),
      },
    },
  };
}
