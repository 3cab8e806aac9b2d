import { createHash } from 'node:crypto';
import { cardIdPrefixOf } from '../domain/card-ids';
import { SEQ_DIGITS } from '../domain/limits';

/**
 * The single table: its shape, its index and every key builder. CDK (infra/task-board-stack.ts)
 * and the local stack (infra/local) both create the table from `tableDefinition`, so the two can
 * never drift. Nothing here imports the AWS SDK: the CDK app reads it too.
 *
 * Layout (see docs/data-model.md for the access patterns and their costs):
 *   BOARD#<boardId>   #BOARD               the board itself
 *   BOARD#<boardId>   #MEMBER#<userId>     a membership (role); sorts before columns and cards
 *   BOARD#<boardId>   COLUMN#<columnId>    a column
 *   BOARD#<boardId>   CARD#<cardId>        a card; its column and position live in `colpos` (LSI)
 *   USER#<userId>     #PROFILE             email and display name
 *   USER#<userId>     BOARD#<boardId>      the user's side of a membership (lists their boards)
 *   EMAIL#<email>     #EMAIL               email -> user id, makes emails unique
 *   COLUMN#<columnId> #LOOKUP              column id -> board id, and the column's card-create version
 *   CARDIDS#<prefix>  #LOOKUP              a board's card-id prefix -> board id: how a card id made
 *                                          under it (UUIDv8, lib/domain/card-ids.ts) reaches its board
 *   CARD#<cardId>     #LOOKUP              a version 4 card id -> board id (cards of boards made
 *                                          before the prefix; immutable: a card never changes board)
 *   BOARD#<boardId>   LABEL#<labelId>      a label of the board (its live ids and names are also on the board item)
 *   BOARD#<boardId>   #LABELNAME#<name>    a label name in lower case: makes names unique on the board
 *   LABEL#<labelId>   #LOOKUP              label id -> board id
 *   BOARD#<boardId>   ARCHIVED#<cardId>    an archived card (before CARD#: outside the tree's range and
 *                                          the position index); its own lookup, if any, says `archived`
 *   BOARD#<boardId>   ~COMMENT#<cardId>#<commentId>  a comment on a card; comment ids are UUIDv7, so
 *                                          a card's comments are one range in the order written
 *                                          (after every letter: outside the tree's range, before the log)
 *   COMMENT#<commentId> #LOOKUP            comment id -> board id and card id
 *
 * Live board events (docs/realtime.md); every one of these items carries a `ttl`:
 *   BOARD#<boardId>   ~LOG#<seq>           the board's event log: one item per change, written in the
 *                                          change's transaction, numbered by the board item's `seq`;
 *                                          a batch's changes in runs, each under its last `seq`
 *   BOARD#<boardId>   ~EVENT#<eventId>     (before the log) a deletion's event; expired a day after writing
 *   BOARD#<boardId>   #WATCH#<connId>      a socket watching the board (its watchers are one query)
 *   TICKET#<sha256>   #TICKET              a single-use socket ticket, by the hash of its value
 *   CONNECTION#<id>   #CONNECTION          a socket: its user, token expiry and watched boards
 *   EXPIRES#<minute>  CONNECTION#<id>      sockets by the minute their token expires (the sweeper's list)
 *
 *   USER#<userId>     SOCKET#<connId>      a socket of the user (what an account deletion closes)
 *   USER#<userId>     TICKET#<sha256>      an unused ticket of the user (what an account deletion deletes)
 *
 * Safe retries (docs/data-model.md, "Idempotency keys"); a `ttl` of 24 hours:
 *   IDEMPOTENCY#<userId>  #IDEMPOTENCY#<keyHash>   a POST's Idempotency-Key: its request's fingerprint and
 *                                                  first answer; one partition per user, which an account deletion empties
 *
 * Webhooks (docs/webhooks.md):
 *   BOARD#<boardId>   WEBHOOK#<webhookId>  a webhook of the board (after LABEL#: outside the tree's range);
 *                                          the board item's `webhook_count` caps them; its
 *                                          `webhook_ids` and `webhooks_version` let a membership change
 *                                          switch off the leaving owner's webhooks in its own transaction
 *   WEBHOOK#<id>      #LOOKUP              webhook id -> board id
 *   WEBHOOK#<id>      DELIVERY#<ms>#<msgId> a delivery of one event to the webhook, by the event's time
 *                                          (13-digit epoch ms) then its webhook-id: newest first is one
 *                                          backwards Query; a `ttl` keeps it at least 7 days
 *   WEBHOOK#<id>      #LEASE#<n>           one of the webhook's attempt slots (n < WEBHOOK_MAX_IN_FLIGHT):
 *                                          `held_until` (epoch ms) and the claim's token while an attempt is
 *                                          in flight; deleted when it is recorded, a `ttl` for the rest
 *
 * Accounts (docs/accounts.md):
 *   USER#<userId>     #DELETION            an account being deleted: its table stream record starts the
 *                                          account collector, which removes it last
 *   USER#<userId>     #CODE#VERIFY         tries of the address verification code mailed last; a `ttl`
 *   EMAIL#<email>     #CODE#RESET          tries of the password reset code mailed last; a `ttl`
 *
 * Personal access tokens (docs/tokens.md); the profile's `token_count` caps them:
 *   TOKEN#<sha256>    #TOKEN               a token by the hash of its text (what a request reads): its
 *                                          user, scopes, boards, expiry, last use; a `ttl` past its expiry
 *   USER#<userId>     TOKEN#<tokenId>      the user's side (what the list, a deletion and revocation read),
 *                                          naming the hash
 */

const PARTITION_KEY = 'pk';
const SORT_KEY = 'sk';

/** LSI over a board's partition: cards ordered by position inside their column. */
export const COLUMN_POSITION_INDEX = 'byColumnPosition';
const COLUMN_POSITION_ATTRIBUTE = 'colpos';

/** Epoch seconds after which DynamoDB may delete an item (its TTL attribute). */
export const TTL_ATTRIBUTE = 'ttl';

/** Plain description of the table, shared by CDK and by the local table creation. */
export const tableDefinition = {
  partitionKey: PARTITION_KEY,
  sortKey: SORT_KEY,
  /** The stream the broadcaster reads: both images, so a record alone makes the whole event. */
  streamView: 'NEW_AND_OLD_IMAGES' as const,
  timeToLiveAttribute: TTL_ATTRIBUTE,
  localSecondaryIndexes: [
    { indexName: COLUMN_POSITION_INDEX, sortKey: COLUMN_POSITION_ATTRIBUTE, projection: 'KEYS_ONLY' as const },
  ],
} as const;

export type ItemKey = { pk: string; sk: string };

/** A secret or a client's text as a key part: SHA-256, base64url (43 characters, never the value). */
export const keyHash = (text: string) => createHash('sha256').update(text).digest('base64url');

const BOARD_SK = '#BOARD';
const MEMBER_PREFIX = '#MEMBER#';
// After every letter: log items sort last, outside every range a request reads but the log's.
const LOG_PREFIX = '~LOG#';
/** A log item's sort key: its `seq` zero-padded to SEQ_DIGITS, so that keys sort as numbers. */
export const logSortKey = (seq: number) => `${LOG_PREFIX}${String(seq).padStart(SEQ_DIGITS, '0')}`;
const WATCH_PREFIX = '#WATCH#';
const LOOKUP_SK = '#LOOKUP';
const COMMENT_PREFIX = '~COMMENT#';

const cardLookupKey = (cardId: string): ItemKey => ({ pk: `CARD#${cardId}`, sk: LOOKUP_SK });
const cardIdsKey = (prefix: string): ItemKey => ({ pk: `CARDIDS#${prefix}`, sk: LOOKUP_SK });

/** Label names are unique on a board compared case-insensitively. */
export const labelNameKey = (name: string) => name.toLowerCase();

/** The minute (epoch seconds / 60) a connection's token expires in: its sweeper bucket. */
export const expiryMinute = (epochSeconds: number) => Math.floor(epochSeconds / 60);

export const keys = {
  boardPartition: (boardId: string) => `BOARD#${boardId}`,
  board: (boardId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: BOARD_SK }),
  member: (boardId: string, userId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `${MEMBER_PREFIX}${userId}` }),
  memberPrefix: MEMBER_PREFIX,
  column: (boardId: string, columnId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `COLUMN#${columnId}` }),
  columnPrefix: 'COLUMN#',
  card: (boardId: string, cardId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `CARD#${cardId}` }),
  cardPrefix: 'CARD#',
  archivedCard: (boardId: string, cardId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `ARCHIVED#${cardId}` }),
  archivedCardPrefix: 'ARCHIVED#',
  comment: (boardId: string, cardId: string, commentId: string): ItemKey => ({
    pk: `BOARD#${boardId}`,
    sk: `${COMMENT_PREFIX}${cardId}#${commentId}`,
  }),
  commentPrefix: COMMENT_PREFIX,
  /** The sort-key prefix of one card's comments. */
  cardCommentsPrefix: (cardId: string) => `${COMMENT_PREFIX}${cardId}#`,
  commentLookup: (commentId: string): ItemKey => ({ pk: `COMMENT#${commentId}`, sk: LOOKUP_SK }),
  userPartition: (userId: string) => `USER#${userId}`,
  userProfile: (userId: string): ItemKey => ({ pk: `USER#${userId}`, sk: '#PROFILE' }),
  userBoard: (userId: string, boardId: string): ItemKey => ({ pk: `USER#${userId}`, sk: `BOARD#${boardId}` }),
  userBoardPrefix: 'BOARD#',
  email: (email: string): ItemKey => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: '#EMAIL' }),
  columnLookup: (columnId: string): ItemKey => ({ pk: `COLUMN#${columnId}`, sk: LOOKUP_SK }),
  /** A card's own lookup, for an id not under its board's prefix (a version 4 id). */
  cardLookup: (cardId: string): ItemKey => cardLookupKey(cardId),
  /** The card's own lookup, which writes keep with the card; none for an id under its board's prefix. */
  cardOwnLookup: (cardId: string): ItemKey | undefined =>
    cardIdPrefixOf(cardId) === undefined ? cardLookupKey(cardId) : undefined,
  /** A board's card-id prefix -> the board (lib/domain/card-ids.ts). */
  cardIds: (prefix: string): ItemKey => cardIdsKey(prefix),
  /** Where a card id's board is read: its board's prefix item, or its own lookup. */
  cardBoardLookup: (cardId: string): ItemKey => {
    const prefix = cardIdPrefixOf(cardId);
    return prefix === undefined ? cardLookupKey(cardId) : cardIdsKey(prefix);
  },
  label: (boardId: string, labelId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `LABEL#${labelId}` }),
  labelPrefix: 'LABEL#',
  labelName: (boardId: string, name: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `#LABELNAME#${labelNameKey(name)}` }),
  labelLookup: (labelId: string): ItemKey => ({ pk: `LABEL#${labelId}`, sk: LOOKUP_SK }),
  logEntry: (boardId: string, seq: number): ItemKey => ({ pk: `BOARD#${boardId}`, sk: logSortKey(seq) }),
  /** Written with a posted change the writer at the head committed for the writer of `ticket` (lib/data/board-turns.ts). */
  turnDone: (boardId: string, ticket: number): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `#TURNDONE#${ticket}` }),
  logPrefix: LOG_PREFIX,
  watch: (boardId: string, connectionId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `${WATCH_PREFIX}${connectionId}` }),
  watchPrefix: WATCH_PREFIX,
  ticket: (ticketHash: string): ItemKey => ({ pk: `TICKET#${ticketHash}`, sk: '#TICKET' }),
  connection: (connectionId: string): ItemKey => ({ pk: `CONNECTION#${connectionId}`, sk: '#CONNECTION' }),
  connectionExpiry: (minute: number, connectionId: string): ItemKey => ({
    pk: `EXPIRES#${minute}`,
    sk: `CONNECTION#${connectionId}`,
  }),
  expiryBucket: (minute: number) => `EXPIRES#${minute}`,
  idempotency: (userId: string, keyHash: string): ItemKey => ({ pk: `IDEMPOTENCY#${userId}`, sk: `#IDEMPOTENCY#${keyHash}` }),
  idempotencyPartition: (userId: string) => `IDEMPOTENCY#${userId}`,
  accountDeletion: (userId: string): ItemKey => ({ pk: `USER#${userId}`, sk: '#DELETION' }),
  verifyCodeTries: (userId: string): ItemKey => ({ pk: `USER#${userId}`, sk: '#CODE#VERIFY' }),
  resetCodeTries: (email: string): ItemKey => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: '#CODE#RESET' }),
  userSocket: (userId: string, connectionId: string): ItemKey => ({ pk: `USER#${userId}`, sk: `SOCKET#${connectionId}` }),
  userSocketPrefix: 'SOCKET#',
  userTicket: (userId: string, ticketHash: string): ItemKey => ({ pk: `USER#${userId}`, sk: `TICKET#${ticketHash}` }),
  userTicketPrefix: 'TICKET#',
  personalToken: (tokenHash: string): ItemKey => ({ pk: `TOKEN#${tokenHash}`, sk: '#TOKEN' }),
  userToken: (userId: string, tokenId: string): ItemKey => ({ pk: `USER#${userId}`, sk: `TOKEN#${tokenId}` }),
  userTokenPrefix: 'TOKEN#',
  webhook: (boardId: string, webhookId: string): ItemKey => ({ pk: `BOARD#${boardId}`, sk: `WEBHOOK#${webhookId}` }),
  webhookPrefix: 'WEBHOOK#',
  webhookLookup: (webhookId: string): ItemKey => ({ pk: `WEBHOOK#${webhookId}`, sk: LOOKUP_SK }),
  /** `occurredAt`: the event's time (ISO 8601); deliveries sort by it, then by their id. */
  delivery: (webhookId: string, occurredAt: string, deliveryId: string): ItemKey => ({
    pk: `WEBHOOK#${webhookId}`,
    sk: `DELIVERY#${String(Date.parse(occurredAt)).padStart(13, '0')}#${deliveryId}`,
  }),
  webhookPartition: (webhookId: string) => `WEBHOOK#${webhookId}`,
  /** Slot `slot` of the webhook's attempts in flight (lib/data/deliveries.ts claimAttempt). */
  webhookLease: (webhookId: string, slot: number): ItemKey => ({ pk: `WEBHOOK#${webhookId}`, sk: `#LEASE#${slot}` }),
  deliveryPrefix: 'DELIVERY#',
};

/** A card's item: `ARCHIVED#<id>` while it is archived, `CARD#<id>` otherwise. */
export const cardKeyOf = (boardId: string, card: { id: string; archived_at?: string | null }): ItemKey =>
  card.archived_at ? keys.archivedCard(boardId, card.id) : keys.card(boardId, card.id);

/** The board id of a key in a board's partition. */
export const boardIdOfPartition = (pk: string) => (pk.startsWith('BOARD#') ? pk.slice('BOARD#'.length) : undefined);

/**
 * Order-preserving string form of a float, so that the LSI sorts cards by numeric position:
 * IEEE 754 bits, sign bit flipped for non-negative numbers and every bit inverted for negative
 * ones, written as 16 hex digits.
 */
export function encodePosition(position: number): string {
  if (!Number.isFinite(position)) throw new RangeError(`position must be finite, got ${position}`);
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleBE(position === 0 ? 0 : position);
  if (bytes[0]! & 0x80) {
    for (let i = 0; i < 8; i++) bytes[i] = ~bytes[i]! & 0xff;
  } else {
    bytes[0] = bytes[0]! | 0x80;
  }
  return bytes.toString('hex');
}

export function decodePosition(encoded: string): number {
  const bytes = Buffer.from(encoded, 'hex');
  if (bytes.length !== 8) throw new RangeError(`not an encoded position: ${encoded}`);
  if (bytes[0]! & 0x80) {
    bytes[0] = bytes[0]! & 0x7f;
  } else {
    for (let i = 0; i < 8; i++) bytes[i] = ~bytes[i]! & 0xff;
  }
  return bytes.readDoubleBE();
}

export const columnPositionKey = (columnId: string, position: number) => `${columnId}#${encodePosition(position)}`;
export const columnPositionPrefix = (columnId: string) => `${columnId}#`;
