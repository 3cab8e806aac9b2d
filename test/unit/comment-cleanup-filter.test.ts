import { marshall } from '@aws-sdk/util-dynamodb';
import { matchesAnyFilter, matchesFilter } from '../../infra/local/stream-poller';
import { deletionOfRecord } from '../../lib/data/change-events';
import { cardWithCommentsDeletionRecordFilter } from '../../lib/data/changes';
import { keys } from '../../lib/data/table';
import { streamConsumers } from '../../lib/routes';

/**
 * A deleted card's comments are removed by the cleanup reader after the answer: its log item
 * carries `comment_count` beside the event when the card had comments (lib/data/cards.ts), and only
 * then does a filter of the reader take it (infra/local/stream-poller.ts applies the filters as
 * Lambda does), and the collector reads it as a card's deletion (lib/data/change-events.ts).
 */
const boardId = '11111111-1111-4111-8111-111111111111';
const cardId = '33333333-3333-4333-8333-333333333333';

const cardDeleted = (extra: Record<string, unknown> = {}) => ({
  eventName: 'INSERT',
  eventSource: 'aws:dynamodb',
  dynamodb: {
    SequenceNumber: '100',
    NewImage: marshall({
      ...extra,
      ...keys.logEntry(boardId, 7),
      type: 'event',
      board_id: boardId,
      seq: 7,
      kind: 'card.deleted',
      event: {
        type: 'card.deleted',
        event_id: 'e',
        board_id: boardId,
        actor_id: 'u',
        occurred_at: '2026-11-23T10:00:00.000Z',
        seq: 7,
        card_id: cardId,
        column_id: 'c',
      },
    }),
  },
});

const cleanup = streamConsumers['children.collect'];

it('the cleanup reader takes a card deletion only when its log item counts comments', () => {
  expect(cleanup.filters).toContain(cardWithCommentsDeletionRecordFilter);
  expect(matchesAnyFilter(cleanup.filters, cardDeleted({ comment_count: 3 }))).toBe(true);
  expect(matchesAnyFilter(cleanup.filters, cardDeleted())).toBe(false);
  expect(matchesFilter(cardWithCommentsDeletionRecordFilter, { ...cardDeleted({ comment_count: 3 }), eventName: 'MODIFY' })).toBe(
    false,
  );
});

it("the collector reads such a record as the card's deletion, and one without comments as nothing to do", () => {
  expect(deletionOfRecord(cardDeleted({ comment_count: 3 }))).toEqual({ kind: 'card.deleted', boardId, cardId });
  expect(deletionOfRecord(cardDeleted())).toBeUndefined();
  expect(deletionOfRecord(cardDeleted({ comment_count: 0 }))).toBeUndefined();
});
