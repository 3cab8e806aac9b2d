/**
 * The stream filters of the table's consumers (CDK's event sources and the local poller apply
 * the same ones). Every change of a board writes its event into a log item (lib/data/event-log.ts:
 * one item per change, a batch's in runs) as watchers receive it; those items' INSERT records are
 * the only ones that carry events, so nothing else in the table (cards, the board's counters,
 * sockets, TTL removals) invokes the broadcaster. The collector's filters below pick deletions by
 * their item's `kind`: those items always hold one change.
 */
export const changeRecordFilter = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { type: { S: ['event'] }, seq: { N: [{ exists: true }] } } },
} as const;

/**
 * The filter of the collector's event source: the log items of board and column deletions.
 * The request answers once the board or column is unreachable; the collector then removes what
 * was in it, with the event source's retries, so that a deletion of any size finishes.
 */
export const deletionRecordFilter = {
  eventName: ['INSERT'],
  dynamodb: {
    NewImage: { type: { S: ['event'] }, seq: { N: [{ exists: true }] }, kind: { S: ['board.deleted', 'column.deleted'] } },
  },
} as const;

/**
 * The filter of the collector's event source for a card's comments: the log items of card
 * deletions that carry `comment_count` (lib/data/cards.ts writes it beside the event only for a
 * card with comments), so that deleting a card without comments invokes no function. A filter of
 * its own: within one pattern every field must match, and board and column deletions carry no count.
 */
export const cardWithCommentsDeletionRecordFilter = {
  eventName: ['INSERT'],
  dynamodb: {
    NewImage: {
      type: { S: ['event'] },
      seq: { N: [{ exists: true }] },
      kind: { S: ['card.deleted'] },
      comment_count: { N: [{ exists: true }] },
    },
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

export const nowSeconds = () => Math.floor(Date.now() / 1000);
