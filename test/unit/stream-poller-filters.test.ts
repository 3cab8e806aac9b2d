import { marshall } from '@aws-sdk/util-dynamodb';
import { matchesAnyFilter, matchesFilter } from '../../infra/local/stream-poller';
import { keys } from '../../lib/data/table';
import { STREAM_FILTERS_MAX, STREAM_READERS_MAX, streamConsumers } from '../../lib/routes';

/**
 * The local stack's stream trigger applies each reader's filters as Lambda's event source mapping
 * does (infra/local/stream-poller.ts): a record is delivered when ANY of the row's filters matches
 * it, and not at all when none does. The records are the shapes the service writes: a log item's
 * INSERT (lib/data/event-log.ts) and an account deletion's marker (lib/data/accounts.ts).
 */
const at = '2026-11-23T10:00:00.000Z';
const boardId = '11111111-1111-4111-8111-111111111111';
const userId = '44444444-4444-4444-8444-444444444444';

const streamRecord = (eventName: 'INSERT' | 'MODIFY' | 'REMOVE', image: Record<string, unknown>) => ({
  eventName,
  eventSource: 'aws:dynamodb',
  dynamodb: {
    SequenceNumber: '100',
    ...(eventName === 'REMOVE' ? { OldImage: marshall(image) } : { NewImage: marshall(image) }),
  },
});
const logItem = (kind: string, seq: number, extra: Record<string, unknown> = {}) => ({
  ...keys.logEntry(boardId, seq),
  type: 'event',
  board_id: boardId,
  seq,
  kind,
  event: { type: kind, event_id: 'e', board_id: boardId, actor_id: userId, occurred_at: at, seq, ...extra },
});
const marker = { ...keys.accountDeletion(userId), type: 'account_deletion', user_id: userId, email: 'a@example.com' };

const change = streamConsumers['events.broadcast'];
const cleanup = streamConsumers['children.collect'];
const takes = (row: { filters: readonly object[] }, record: unknown) => matchesAnyFilter(row.filters, record);

it('the table has at most two stream readers, each with one to five filters', () => {
  expect(Object.keys(streamConsumers).length).toBeLessThanOrEqual(STREAM_READERS_MAX);
  for (const row of Object.values(streamConsumers)) {
    expect(row.filters.length).toBeGreaterThanOrEqual(1);
    expect(row.filters.length).toBeLessThanOrEqual(STREAM_FILTERS_MAX);
  }
});

it('a record passes when any filter matches it, and no filter means nothing passes', () => {
  const inserted = streamRecord('INSERT', { type: 'a' });
  const onlyA = { eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['a'] } } } };
  const onlyB = { eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['b'] } } } };
  expect(matchesAnyFilter([onlyB, onlyA], inserted)).toBe(true);
  expect(matchesAnyFilter([onlyA, onlyB], inserted)).toBe(true);
  expect(matchesAnyFilter([onlyB], inserted)).toBe(false);
  expect(matchesAnyFilter([], inserted)).toBe(false);
  expect(matchesFilter(onlyA, inserted)).toBe(true);
});

it('the change reader takes every log item INSERT (deletions included) and nothing else', () => {
  expect(takes(change, streamRecord('INSERT', logItem('card.moved', 2)))).toBe(true);
  expect(takes(change, streamRecord('INSERT', logItem('board.deleted', 3)))).toBe(true);
  expect(takes(change, streamRecord('MODIFY', logItem('card.moved', 2)))).toBe(false);
  expect(takes(change, streamRecord('REMOVE', logItem('card.moved', 2)))).toBe(false);
  expect(takes(change, streamRecord('INSERT', marker))).toBe(false);
  const { seq: _seq, ...unnumbered } = logItem('card.moved', 2);
  expect(takes(change, streamRecord('INSERT', unnumbered))).toBe(false);
});

it('the cleanup reader takes board and column deletions and account deletion markers, through its filters', () => {
  // The third takes the deletions of cards with comments (test/unit/comment-cleanup-filter.test.ts).
  expect(cleanup.filters).toHaveLength(3);
  expect(takes(cleanup, streamRecord('INSERT', logItem('board.deleted', 3)))).toBe(true);
  expect(takes(cleanup, streamRecord('INSERT', logItem('column.deleted', 4, { column_id: 'c' })))).toBe(true);
  expect(takes(cleanup, streamRecord('INSERT', marker))).toBe(true);
  // Each filter alone takes only its own kind: together they are the union.
  const [deletions, accounts] = cleanup.filters;
  expect(matchesFilter(deletions!, streamRecord('INSERT', marker))).toBe(false);
  expect(matchesFilter(accounts!, streamRecord('INSERT', logItem('board.deleted', 3)))).toBe(false);
  expect(takes(cleanup, streamRecord('INSERT', logItem('card.moved', 2)))).toBe(false);
  expect(takes(cleanup, streamRecord('MODIFY', marker))).toBe(false);
  expect(takes(cleanup, streamRecord('REMOVE', marker))).toBe(false);
});
