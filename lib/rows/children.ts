import { accountDeletionRecordFilter, cardWithCommentsDeletionRecordFilter, deletionRecordFilter } from '../data/changes';
import type { StreamConsumerRow } from './row';

/**
 * The table stream's cleanup reader, the second of its two (the other: `events.broadcast`,
 * lib/rows/events.ts; docs/realtime.md "The readers"). Its id is that of the reader it took over
 * (the board collector's), so that an upgrade keeps its event source mapping, its position in the
 * stream and its dead letters (test/infra/upgrade.test.ts).
 */

export const childrenCollect = {
  id: 'children.collect',
  entry: 'functions/children/collect.ts',
  summary:
    "Removes a deleted board's items or a deleted column's cards, and takes a deleted account off every board, after the request answered",
  filters: [deletionRecordFilter, accountDeletionRecordFilter, cardWithCommentsDeletionRecordFilter],
  batchSize: 10,
  // Every attempt makes progress and is safe to repeat; a day of retries before the DLQ.
  retryAttempts: 100,
  maxRecordAgeSeconds: 24 * 3600,
  // The board and column collector's (Query, BatchWriteItem, UpdateItem; the index's Query) and the
  // account collector's (BatchGetItem, DeleteItem, PutItem, ConditionCheckItem: leaving a board as
  // a removal would, deleting those it owned alone, forgetting its sockets and records).
  table: [
    'dynamodb:Query',
    'dynamodb:BatchGetItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:DeleteItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
  ],
  index: ['dynamodb:Query'],
  cognito: [],
  // A deleted account's sockets are closed.
  manageConnections: true,
  env: ['SOCKET_CALLBACK_URL'],
  timeoutSeconds: 900,
} satisfies StreamConsumerRow;
