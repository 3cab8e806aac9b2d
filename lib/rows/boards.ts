import {
  batchBody,
  DEFAULT_EVENTS_PAGE,
  eventsQuery,
  idParams,
  MAX_EVENTS_PAGE,
  titleBody,
  treeQuery,
  WELL_FORMED_PATTERN,
} from '../contract/schemas';
import { MAX_BATCH_OPERATIONS, MAX_TREE_QUERY_LENGTH } from '../domain/limits';
import { archiveTooLargeDetail, boardListTooLargeDetail, boardTooLargeDetail } from './oversize';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/** Boards: the caller's list, and one board addressed by id. */

export const boardsList = {
  id: 'boards.list',
  method: 'GET',
  path: '/boards',
  entry: 'functions/boards/list.ts',
  logGroup: 'root',
  summary: "List the caller's boards, newest first",
  access: { scope: 'user' },
  success: { status: 200, schema: 'boardList' },
  table: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
  // A list too large for one answer (over 6 MB even compressed) is 422, naming its boards.
  errors: [422],
  cognito: [],
} satisfies RouteRow;

export const boardsListText = {
  of: boardsList,
  tag: 'boards',
  description:
    'The boards the caller is a member of (whatever the role), newest first by `created_at` (ties by id). Not paginated: the whole list. A list too large for one answer (over 6 MB even compressed; thousands of boards with long titles) gets 422 listing the board ids, newest first, to be read one at a time with GET /boards/{id}.',
  problems: () => ({
    422: {
      code: 'response_too_large',
      detail: boardListTooLargeDetail(true),
      extra: { board_ids: ['7c9e6679-7425-40de-944b-e07fc1f90ae7', '2a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d'] },
    },
  }),
} satisfies RouteText;

export const boardsCreate = {
  id: 'boards.create',
  method: 'POST',
  path: '/boards',
  entry: 'functions/boards/create.ts',
  logGroup: 'root',
  summary: 'Create a board owned by the caller',
  access: { scope: 'user' },
  // The board, its card-id prefix item, both sides of the membership and the account's check: one TransactWriteItems.
  rateLimitPlacement: 'fold',
  body: titleBody,
  success: { status: 201, schema: 'board' },
  idempotent: 'caller',
  // The board, its card-id prefix item and both sides of the membership, with a check that the caller's account still exists;
  // the rate limiter's count rides in the same transaction and is read back beside it (BatchGetItem:
  // docs/rate-limits.md, "POST /boards").
  table: ['dynamodb:PutItem', 'dynamodb:ConditionCheckItem', 'dynamodb:BatchGetItem'],
  metric: 'BoardCreated',
  cognito: [],
} satisfies RouteRow;

export const boardsCreateText = {
  of: boardsCreate,
  tag: 'boards',
  description: 'Creates a board; the caller becomes its owner and first member.',
} satisfies RouteText;

export const boardsGet = {
  id: 'boards.get',
  method: 'GET',
  path: '/boards/{id}',
  entry: 'functions/boards/get.ts',
  logGroup: 'root',
  summary: 'Read a board with its columns and cards, optionally filtered',
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  query: treeQuery,
  success: { status: 200, schema: 'boardTree' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  // A tree too large for one answer (over 6 MB even compressed) is 422, naming its columns.
  errors: [422],
  conditional: 'read',
  cognito: [],
} satisfies RouteRow;

export const boardsGetText = {
  of: boardsGet,
  tag: 'boards',
  description:
    "The board with its columns (ascending position), each column with its cards (ascending position; ties by created_at, then id), and the board's labels. Archived cards are in no column (`GET /boards/{id}/archive`). The filters narrow the cards listed, combined with AND; every column is still there, and the answer costs what the unfiltered tree costs. A board too large for one answer (over 6 MB even compressed) gets 422 listing its columns, to be read one at a time.",
  query: () => ({
    label_id: {
      description: 'Only the cards that carry this label of the board.',
      schema: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 },
      example: '3c9e1f7a-2b4d-4e6f-8a1b-2c3d4e5f6a7b',
    },
    assignee_id: {
      description: 'Only the cards this user is assigned to.',
      schema: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 },
      example: '9b2f6c1e-4d3a-4f5b-8c7d-1e2f3a4b5c6d',
    },
    due_before: {
      description:
        'Only the cards whose due date is strictly earlier than this ISO 8601 UTC timestamp (with `Z`); cards without one are left out.',
      schema: { type: 'string', format: 'date-time', maxLength: 30 },
      example: '2026-12-01T00:00:00.000Z',
    },
    q: {
      description: `Only the cards whose title or description contains this text, compared case-insensitively: 1 to ${MAX_TREE_QUERY_LENGTH} characters.`,
      schema: { type: 'string', minLength: 1, maxLength: MAX_TREE_QUERY_LENGTH, pattern: WELL_FORMED_PATTERN },
      example: 'release',
    },
  }),
  problems: () => ({
    422: {
      code: 'response_too_large',
      detail: boardTooLargeDetail(true),
      extra: { columns: [{ id: '5d1f2a3b-6c7d-4e8f-9a0b-1c2d3e4f5a6b', title: 'Archive', cards: 450 }] },
    },
  }),
} satisfies RouteText;

export const boardsArchive = {
  id: 'boards.archive',
  method: 'GET',
  path: '/boards/{id}/archive',
  entry: 'functions/boards/archive.ts',
  summary: "List a board's archived cards",
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'archivedCardList' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  // An archive too large for one answer (over 6 MB even compressed) is 422, naming its cards.
  errors: [422],
  cognito: [],
} satisfies RouteRow;

export const boardsArchiveText = {
  of: boardsArchive,
  tag: 'boards',
  description:
    "The board's archived cards, most recently archived first (ties: id), each as `GET /cards/{id}` shows it. One query of the board's archive, however many cards its columns hold. An archive too large for one answer (over 6 MB even compressed) gets 422 listing its cards' ids, to be read one at a time.",
  problems: () => ({
    422: {
      code: 'response_too_large',
      detail: archiveTooLargeDetail(true),
      extra: { card_ids: ['6e2a1b3c-4d5e-4f60-8a1b-2c3d4e5f6a7b'] },
    },
  }),
} satisfies RouteText;

export const boardsRename = {
  id: 'boards.rename',
  method: 'PATCH',
  path: '/boards/{id}',
  entry: 'functions/boards/rename.ts',
  logGroup: 'root',
  summary: 'Rename a board',
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  body: titleBody,
  success: { status: 200, schema: 'board' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;

export const boardsRenameText = {
  of: boardsRename,
  tag: 'boards',
  description: 'Sets the title; any member may. Other fields sent are ignored.',
} satisfies RouteText;

export const boardsDelete = {
  id: 'boards.delete',
  method: 'DELETE',
  path: '/boards/{id}',
  entry: 'functions/boards/delete.ts',
  logGroup: 'root',
  summary: 'Delete a board and everything on it (owners only)',
  access: { scope: 'board', via: 'board', role: 'owner' },
  params: idParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'],
  metric: 'BoardDeleted',
  cognito: [],
} satisfies RouteRow;

export const boardsDeleteText = {
  of: boardsDelete,
  tag: 'boards',
  description:
    'Deletes the board with its columns, cards, labels and memberships (owners only). The board is gone at once (members get 403, its columns and cards 404); the items are removed in the background.',
} satisfies RouteText;

export const boardsEvents = {
  id: 'boards.events',
  method: 'GET',
  path: '/boards/{id}/events',
  entry: 'functions/boards/events.ts',
  summary: "Read a board's events after a seq: catching up after a reconnect, and the board's history",
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  query: eventsQuery,
  success: { status: 200, schema: 'eventPage' },
  // The first event after `after` is no longer kept: 410 resync_required.
  errors: [410],
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  env: ['EVENT_RETENTION_SECONDS'],
  cognito: [],
} satisfies RouteRow;

export const boardsEventsText = {
  of: boardsEvents,
  tag: 'boards',
  description:
    "The board's events with `seq` above `after`, in ascending `seq`, each exactly as watchers received it (kinds and fields: `/asyncapi.json`): what a client missed while its socket was down, and the board's activity history. Read-your-writes: once a change's answer has arrived, it is listed. Events are kept 7 days: when the first event after `after` is no longer kept the answer is 410 `resync_required`, and the client reads `GET /boards/{id}` again and goes on from its `seq`. An `after` at or past `latest_seq` answers an empty list.",
  query: () => ({
    after: {
      description:
        'The `seq` the client has seen last (from the tree, `watch.ack` or an event): events with a higher `seq` are returned. A non-negative whole number; omitted: 0.',
      schema: { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
      example: 41,
    },
    limit: {
      description: `The most events to return: 1 to ${MAX_EVENTS_PAGE}, default ${DEFAULT_EVENTS_PAGE}.`,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_EVENTS_PAGE, default: DEFAULT_EVENTS_PAGE },
      example: 100,
    },
  }),
} satisfies RouteText;

export const boardsBatch = {
  id: 'boards.batch',
  method: 'POST',
  path: '/boards/{id}/batch',
  entry: 'functions/boards/batch.ts',
  summary: `Apply up to ${MAX_BATCH_OPERATIONS} changes to a board at once, all or none`,
  access: { scope: 'board', via: 'board', role: 'member' },
  // The count (one per operation) is one more item of the batch's own transaction.
  rateLimitPlacement: 'fold',
  rateLimitCost: 'operations',
  params: idParams,
  body: batchBody,
  success: { status: 200, schema: 'batchResult' },
  // An operation's own refusal (a card archived: 409) and a batch whose writes do not fit in one
  // transaction (409 limit_reached).
  errors: [409],
  idempotent: 'caller',
  // Lookups and items (BatchGetItem), the columns' highest positions (Query, the index for cards),
  // then one TransactWriteItems of puts, updates, deletes and checks; the folded count is read back
  // beside it (BatchGetItem).
  table: [
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:ConditionCheckItem',
  ],
  index: ['dynamodb:Query'],
  metric: 'BatchApplied',
  cognito: [],
} satisfies RouteRow;

export const boardsBatchText = {
  of: boardsBatch,
  tag: 'boards',
  description: `Applies 1 to ${MAX_BATCH_OPERATIONS} operations to the board, in order, exactly as their single routes would one after another (the same checks, positions and limits), or none of them: \`column.create\` (POST /boards/{id}/columns), \`card.create\` (POST /columns/{id}/cards), \`card.update\` (PATCH /cards/{id}), \`card.move\` (PATCH /cards/{id}/move) and \`card.delete\` (DELETE /cards/{id}). An operation may name what it creates with a \`ref\`, which later operations use instead of its id (\`column_ref\`, \`card_ref\`, \`target_column_ref\`, \`before_ref\`, \`after_ref\`). Answers one result per operation: the body its single route answers, null for a delete. Each operation is one change of the board's event log, with the events its single route sends; the batch's are consecutive, nothing else between them. When an operation fails, nothing is applied and the answer is the problem that operation would get alone, with \`operation\` (its 0-based index); an operation naming a column or card of another board is 403. A malformed batch (an unknown \`op\`, a bad field, a \`ref\` used twice or before it is made, an id given with a ref) is 400 before anything is read. Counts as one request per operation against the rate limit (fewer left than operations: 429, nothing applied); a refused batch counts as one. \`If-Match\` is ignored and the answer has no \`ETag\`.`,
  problems: () => ({
    404: { code: 'not_found', detail: 'Card was not found.', extra: { operation: 2 } },
    409: {
      code: 'archived',
      detail: 'The card is archived: restore it (POST /cards/{id}/restore) before moving it.',
      extra: { operation: 0 },
    },
  }),
} satisfies RouteText;
