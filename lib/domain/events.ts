/**
 * Live board events (docs/reference.md, "Live events"): what a watcher of a board is sent after each
 * committed change. Every event has the same envelope; the kinds below add their own fields.
 */
export const BOARD_EVENT_KINDS = [
  'card.created',
  'card.updated',
  'card.moved',
  'card.deleted',
  'card.archived',
  'card.restored',
  'column.created',
  'column.updated',
  'column.moved',
  'column.deleted',
  'board.updated',
  'board.deleted',
  'member.added',
  'member.updated',
  'member.removed',
  'label.created',
  'label.updated',
  'label.deleted',
  'comment.created',
  'comment.updated',
  'comment.deleted',
] as const;
export type BoardEventKind = (typeof BOARD_EVENT_KINDS)[number];

export interface BoardEvent {
  type: BoardEventKind | 'access.revoked';
  /** The change's own id: the same on every redelivery, so clients drop duplicates by it. */
  event_id: string;
  board_id: string;
  actor_id: string;
  /** ISO 8601 UTC, milliseconds, `Z`: the time the change was written. */
  occurred_at: string;
  /** The change's number on its board: 1, 2, 3, ... with no gap (absent on `access.revoked`). */
  seq?: number;
  [field: string]: unknown;
}

/** Frames the server sends a socket besides board events. */
export type ControlFrame =
  | { type: 'watch.ack'; board_id: string; seq: number }
  | { type: 'unwatch.ack'; board_id: string }
  | { type: 'pong' }
  | { type: 'token.expired' }
  | { type: 'error'; code: SocketErrorCode; detail: string; ref?: string; board_id?: string };

export type SocketErrorCode = 'bad_request' | 'forbidden' | 'limit' | 'unavailable' | 'internal';
