import { byLabelName } from '../domain/ordering';

/**
 * Stored records and the public shapes of the spec. Items carry internal attributes (keys, index
 * attributes, versions); the `to*` views pick exactly the spec's fields, so nothing internal leaks.
 */
export type Role = 'owner' | 'member';

export interface BoardRecord {
  id: string;
  owner_id: string;
  title: string;
  created_at: string;
  /** Boards made before the event log: column creates were serialised by it; the board's `seq` does that now. */
  column_version?: number;
  /** Owners on the board; kept in the same transaction as every role change, never below 1. */
  owner_count?: number;
  /** Columns whose deletion has begun: their cards are already gone for every route. */
  deleting_columns?: Set<string>;
  /**
   * The board's live labels, id -> name: what every route reads (with the board, at no extra
   * round trip) to show a card's label_ids without the ids of deleted labels, in label order.
   */
  labels?: Record<string, string>;
  /** The `seq` of the board's latest change (lib/data/event-log.ts); absent until its first. */
  seq?: number;
  /**
   * What every card id of the board starts with (lib/domain/card-ids.ts), its `CARDIDS#` item
   * written with the board. Absent on boards made before it: their cards get version 4 ids.
   */
  card_id_prefix?: string;
  /** How many webhooks the board has (webhooks.md: at most 10); kept in each create's and delete's transaction. */
  webhook_count?: number;
  /**
   * The board's members, user id -> the `seq` of the change that made them one (0: before the
   * board's first change, or before this map existed), kept in the same transaction as every
   * membership change. What every route reads (with the board, at no extra round trip) to show a
   * card's assignee_ids without the ids of members who left: an assignment counts only while its
   * user is a member and was made after they joined. Absent on boards made before assignees
   * existed until their first assignment (lib/data/assignees.ts).
   */
  members?: Record<string, number>;
  /** The board's queue of writers (lib/data/board-turns.ts): the next ticket to hand out... */
  turn_next?: number;
  /** ...and the ticket whose turn it is; equal (or absent) when nobody queues. */
  turn_head?: number;
  /** Tickets whose writers gave up before their turn: skipped at once when the head reaches them. */
  turn_gone?: Set<number>;
  /** When the head last moved (epoch ms), and how long turns take (ms, a moving average): when waiters read again. */
  turn_at?: number;
  turn_ms?: number;
  /**
   * The changes queued writers posted for the writer at the head to commit with its own, by
   * ticket (lib/data/board-turns.ts, "posted changes"): card creates and edits. Empty or absent when nobody
   * posts; an entry goes with the turn that commits it, or with its writer giving up.
   */
  turn_posts?: Record<string, PostedChange>;
  /**
   * Where the latest card create that held the board's turn put its card, with that change's
   * `seq`: while the board's `seq` is still that one, nothing else has changed on the board since,
   * so that card is its column's last, and the next create holding the turn appends after it
   * without a query (lib/data/cards.ts says why only a turn's create writes it).
   */
  last_append?: { column_id: string; position: number; seq: number };
}

/** A queued card create as its writer posts it: all the writer at the head needs to commit it too. */
export interface PostedCreate {
  kind: 'card.create';
  column_id: string;
  card_id: string;
  title: string;
  description: string | null;
  /** The user whose create it is: its event's actor. */
  actor: string;
  /** The writer's deadline (epoch ms): past it the writer has answered, and its post is not committed. */
  until?: number;
}

/**
 * A queued card edit as its writer posts it: the card as the writer read it (the head's write
 * requires it unchanged, as the writer's own would), the key it was read at, and the fields set.
 */
export interface PostedUpdate {
  kind: 'card.update';
  card_sk: string;
  card: CardRecord;
  fields: Record<string, string>;
  actor: string;
  until?: number;
}

/** A change posted for the writer at the head. */
export type PostedChange = PostedCreate | PostedUpdate;

export interface MemberRecord {
  board_id: string;
  user_id: string;
  role: Role;
  joined_at: string;
}

export interface ColumnRecord {
  id: string;
  board_id: string;
  title: string;
  position: number;
  created_at: string;
}

export interface CardRecord {
  id: string;
  board_id: string;
  column_id: string;
  title: string;
  description: string | null;
  position: number;
  created_at: string;
  /** Ids of the labels put on the card; a deleted label's id may linger until the cleanup removes it. */
  label_ids?: Set<string>;
  /**
   * The card's write counter: every write of the card advances it by one in the same update, and
   * requires it as read (lib/data/cards.ts). Its entity tag is made from it (lib/data/etags.ts).
   * Absent on a card not written since the counter came: 0.
   */
  version?: number;
  /** Absent or null: no due date. */
  due_at?: string | null;
  /**
   * Assignees, user id -> the `seq` of the change that assigned them: shown in that order, and
   * only while the board's `members` says the user is a member who joined before it (a member who
   * left, or left and came back, is not shown; the card's next assignee change drops such ids).
   */
  assignees?: Record<string, number>;
  /** Set while the card is archived: its item is then `ARCHIVED#<id>`, outside its column. */
  archived_at?: string | null;
  /** Comments on the card, kept in the same transaction as every comment's create and delete. */
  comment_count?: number;
}

/** A comment on a card, item `BOARD#<board> / ~COMMENT#<card>#<comment>` (lib/data/comments.ts). */
export interface CommentRecord {
  id: string;
  board_id: string;
  card_id: string;
  author_id: string;
  body: string;
  created_at: string;
  edited_at: string | null;
}

export interface CommentLookup {
  board_id: string;
  card_id: string;
}

export interface LabelRecord {
  id: string;
  board_id: string;
  name: string;
  color: string;
  created_at: string;
}

export interface ColumnLookup {
  board_id: string;
  /** Bumped by every card create in the column: see lib/data/cards.ts for why it lives here. */
  card_version: number;
}

export interface CardLookup {
  board_id: string;
  /**
   * The card is archived: its item is `ARCHIVED#<id>` rather than `CARD#<id>`. Only a card's own
   * lookup says so; a board's card-id prefix item never does (its card is read at both keys).
   */
  archived?: boolean;
}

export interface Member {
  user_id: string;
  email: string;
  display_name: string;
  role: Role;
}

export type Board = Pick<BoardRecord, 'id' | 'owner_id' | 'title' | 'created_at'>;
export type Column = Pick<ColumnRecord, 'id' | 'board_id' | 'title' | 'position'>;
export type Card = Pick<CardRecord, 'id' | 'column_id' | 'title' | 'description' | 'position' | 'created_at'> & {
  label_ids: string[];
  due_at: string | null;
  assignee_ids: string[];
  archived_at: string | null;
  comment_count: number;
};
export type Comment = Pick<CommentRecord, 'id' | 'card_id' | 'author_id' | 'body' | 'created_at' | 'edited_at'>;
export type Label = Pick<LabelRecord, 'id' | 'board_id' | 'name' | 'color'>;
export type ColumnWithCards = Column & { cards: Card[] };
/** The tree and its `seq`: every change up to and including that one is reflected in it. */
export type BoardTree = Board & { seq: number; columns: ColumnWithCards[]; labels: Label[] };

/** A board's live labels (id -> name), as the board item keeps them. */
export type LiveLabels = Record<string, string> | undefined;

/** What of the board item a card's answer depends on: its live labels and its members. */
export type CardContext = Pick<BoardRecord, 'labels' | 'members'>;

export const toBoard = (r: BoardRecord): Board => ({
  id: r.id,
  owner_id: r.owner_id,
  title: r.title,
  created_at: r.created_at,
});

export const toColumn = (r: ColumnRecord): Column => ({
  id: r.id,
  board_id: r.board_id,
  title: r.title,
  position: r.position,
});

/**
 * A card as the API shows it, in the context of its board item: ids of labels deleted since they
 * were put on the card are left out, and the rest come in label order (name, then id), as
 * GET /boards/{id}/labels lists them at this moment; assignees who are no longer members (or
 * were assigned before they last joined) are left out, and the rest come in the order assigned.
 */
export const toCard = (r: CardRecord, board: CardContext): Card => ({
  id: r.id,
  column_id: r.column_id,
  title: r.title,
  description: r.description ?? null,
  position: r.position,
  created_at: r.created_at,
  label_ids: liveLabelIds(r.label_ids, board.labels),
  due_at: r.due_at ?? null,
  assignee_ids: liveAssigneeIds(r.assignees, board.members),
  archived_at: r.archived_at ?? null,
  comment_count: r.comment_count ?? 0,
});

/** Whether `userId` is on the card as an assignee the board still shows (see CardRecord.assignees). */
export const isLiveAssignee = (members: CardContext['members'], userId: string, assignedAt: number) =>
  members !== undefined && Object.hasOwn(members, userId) && assignedAt > members[userId]!;

/** A card's assignees as shown: live ones only, in the order they were assigned (by `seq`). */
function liveAssigneeIds(assignees: CardRecord['assignees'], members: CardContext['members']): string[] {
  if (!assignees || !members) return [];
  return Object.entries(assignees)
    .filter(([userId, assignedAt]) => isLiveAssignee(members, userId, assignedAt))
    .sort(([, a], [, b]) => a - b)
    .map(([userId]) => userId);
}

export const toComment = (r: CommentRecord): Comment => ({
  id: r.id,
  card_id: r.card_id,
  author_id: r.author_id,
  body: r.body,
  created_at: r.created_at,
  edited_at: r.edited_at ?? null,
});

/** Whether the board's map of live labels names this label (a deleted one is gone from it first). */
export const isLiveLabel = (labels: LiveLabels, id: string) => labels !== undefined && Object.hasOwn(labels, id);

export function liveLabelIds(ids: Iterable<string> | undefined, labels: LiveLabels): string[] {
  if (!ids || !labels) return [];
  return [...ids]
    .filter((id) => isLiveLabel(labels, id))
    .map((id) => ({ id, name: labels[id]! }))
    .sort(byLabelName)
    .map((label) => label.id);
}

export const toLabel = (r: LabelRecord): Label => ({ id: r.id, board_id: r.board_id, name: r.name, color: r.color });

/** Millisecond ISO 8601 UTC with `Z`, as the contract fixes. */
export const now = () => new Date().toISOString();

/**
 * A webhook (webhooks.md), item `BOARD#<board> / WEBHOOK#<id>`. The secrets are stored only as
 * KMS ciphertexts bound to the webhook (docs/webhooks.md "Secrets at rest"); `toWebhook` never
 * shows them. The delivery worker keeps the failure fields.
 */
export interface WebhookRecord {
  id: string;
  board_id: string;
  url: string;
  /** Event types it selects; empty: all of them. */
  events: string[];
  description: string | null;
  active: boolean;
  disabled_reason: 'failing' | null;
  created_at: string;
  /** KMS ciphertext of the current secret's text (`whsec_…`). */
  secret_enc: Uint8Array;
  /** The secret before the last rotation: it still signs until `rotated_at` + 24 h. */
  previous_secret_enc?: Uint8Array;
  rotated_at?: string;
  /** The first failed attempt since the last success (switching off after 5 days of failures). */
  failing_since?: string;
  /** Deliveries that ended failed since the last success (switching off at 50). */
  failed_in_row?: number;
  /** Set when the board is deleted: the item stays until pending deliveries end, then TTL removes it. */
  ttl?: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A delivery of one event to one webhook (webhooks.md "Delivery"), item `WEBHOOK#<id> / DELIVERY#…`. */
export interface DeliveryRecord {
  /** The `webhook-id` header: the same on every attempt (lib/webhooks/signature.ts deliveryId). */
  id: string;
  webhook_id: string;
  board_id: string;
  event_id: string;
  type: string;
  seq: number | null;
  /** The exact bytes every attempt sends and signs (the event's JSON). */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  /** The event's time: the delivery's place in the log, newest first. */
  occurred_at: string;
  ttl: number;
}

/**
 * One of a webhook's attempt slots, item `WEBHOOK#<id> / #LEASE#<n>` (docs/webhooks.md "One
 * webhook's attempts in flight"): taken with a delivery's claim, deleted with its record. Free when
 * absent or when `held_until` has passed (a worker that died holding it); `ttl` only cleans up.
 */
export interface LeaseRecord {
  webhook_id: string;
  slot: number;
  /** Epoch ms: the claim's expiry. The rule reads this, never `ttl`. */
  held_until: number;
  /** The claim's token: only its holder deletes the slot. */
  claim_token: string;
  /** The delivery being attempted under it (for the operator who reads the item). */
  delivery_sk: string;
  ttl: number;
}
