import { idParams, moveColumnBody, titleBody } from '../contract/schemas';
import { columnTooLargeDetail } from './oversize';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/** Columns: appended to a board, then addressed by id. */

export const columnsCreate = {
  id: 'columns.create',
  method: 'POST',
  path: '/boards/{id}/columns',
  entry: 'functions/columns/create.ts',
  logGroup: 'root',
  summary: 'Append a column to a board',
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  body: titleBody,
  success: { status: 201, schema: 'column' },
  idempotent: 'caller',
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  metric: 'ColumnCreated',
  cognito: [],
} satisfies RouteRow;

export const columnsCreateText = {
  of: columnsCreate,
  tag: 'columns',
  description: 'Appends a column: its position is the highest column position of the board + 1.0, or 1.0 for the first.',
} satisfies RouteText;

export const columnsGet = {
  id: 'columns.get',
  method: 'GET',
  path: '/columns/{id}',
  entry: 'functions/columns/get.ts',
  logGroup: 'root',
  summary: 'Read a column with its cards',
  access: { scope: 'board', via: 'column', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'columnWithCards' },
  table: ['dynamodb:BatchGetItem'],
  index: ['dynamodb:Query'],
  // A column too large for one answer (over 6 MB even compressed) is 422, naming its cards.
  errors: [422],
  cognito: [],
} satisfies RouteRow;

export const columnsGetText = {
  of: columnsGet,
  tag: 'columns',
  description:
    'The column with its cards, by ascending position (ties by created_at, then id). A column too large for one answer (over 6 MB even compressed) gets 422 listing its card ids in that order, to be read one at a time with GET /cards/{id}.',
  problems: () => ({
    422: {
      code: 'response_too_large',
      detail: columnTooLargeDetail(true),
      extra: { card_ids: ['9b2f6c1e-4d3a-4f5b-8c7d-1e2f3a4b5c6d', '3f0c8a52-5b7e-4c1a-9d2e-8f6b1a2c3d4e'] },
    },
  }),
} satisfies RouteText;

export const columnsRename = {
  id: 'columns.rename',
  method: 'PATCH',
  path: '/columns/{id}',
  entry: 'functions/columns/rename.ts',
  logGroup: 'root',
  summary: 'Rename a column',
  access: { scope: 'board', via: 'column', role: 'member' },
  params: idParams,
  body: titleBody,
  success: { status: 200, schema: 'column' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;

export const columnsRenameText = {
  of: columnsRename,
  tag: 'columns',
  description: 'Sets the title; any member may.',
} satisfies RouteText;

export const columnsDelete = {
  id: 'columns.delete',
  method: 'DELETE',
  path: '/columns/{id}',
  entry: 'functions/columns/delete.ts',
  logGroup: 'root',
  summary: 'Delete a column and its cards',
  access: { scope: 'board', via: 'column', role: 'member' },
  params: idParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  cognito: [],
} satisfies RouteRow;

export const columnsDeleteText = {
  of: columnsDelete,
  tag: 'columns',
  description: 'Deletes the column; its cards are deleted with it (at once for readers, removed in the background).',
} satisfies RouteText;

export const columnsMove = {
  id: 'columns.move',
  method: 'PATCH',
  path: '/columns/{id}/move',
  entry: 'functions/columns/move.ts',
  logGroup: 'root',
  summary: 'Move a column between two columns of its board',
  access: { scope: 'board', via: 'column', role: 'member' },
  params: idParams,
  body: moveColumnBody,
  success: { status: 200, schema: 'column' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;

export const columnsMoveText = {
  of: columnsMove,
  tag: 'columns',
  description:
    'Moves the column between two columns of its board: `before_id` is the column that will precede it, `after_id` the column that will follow it (null is the same as omitted). Positions are computed as for cards: (before + after) / 2, before + 1.0, after - 1.0, or 1.0 with neither.',
} satisfies RouteText;
