import { idParams, moveColumnBody, titleBody } from '../contract/schemas';
import type { RouteRow } from './row';

/** Columns: appended to a board, then addressed by id. */

export const columnsCreate = {
  id: 'columns.create',
  method: 'POST',
  path: '/boards/{id}/columns',
  entry: 'functions/columns/create.ts',
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

export const columnsGet = {
  id: 'columns.get',
  method: 'GET',
  path: '/columns/{id}',
  entry: 'functions/columns/get.ts',
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

export const columnsRename = {
  id: 'columns.rename',
  method: 'PATCH',
  path: '/columns/{id}',
  entry: 'functions/columns/rename.ts',
  summary: 'Rename a column',
  access: { scope: 'board', via: 'column', role: 'member' },
  params: idParams,
  body: titleBody,
  success: { status: 200, schema: 'column' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;

export const columnsDelete = {
  id: 'columns.delete',
  method: 'DELETE',
  path: '/columns/{id}',
  entry: 'functions/columns/delete.ts',
  summary: 'Delete a column and its cards',
  access: { scope: 'board', via: 'column', role: 'member' },
  params: idParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  cognito: [],
} satisfies RouteRow;

export const columnsMove = {
  id: 'columns.move',
  method: 'PATCH',
  path: '/columns/{id}/move',
  entry: 'functions/columns/move.ts',
  summary: 'Move a column between two columns of its board',
  access: { scope: 'board', via: 'column', role: 'member' },
  params: idParams,
  body: moveColumnBody,
  success: { status: 200, schema: 'column' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;
