import { eventsQuery, idParams, titleBody } from '../contract/schemas';
import type { RouteRow } from './row';

/** Boards: the caller's list, and one board addressed by id. */

export const boardsList = {
  id: 'boards.list',
  method: 'GET',
  path: '/boards',
  entry: 'functions/boards/list.ts',
  summary: "List the caller's boards, newest first",
  access: { scope: 'user' },
  success: { status: 200, schema: 'boardList' },
  table: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
  // A list too large for one answer (over 6 MB even compressed) is 422, naming its boards.
  errors: [422],
  cognito: [],
} satisfies RouteRow;

export const boardsCreate = {
  id: 'boards.create',
  method: 'POST',
  path: '/boards',
  entry: 'functions/boards/create.ts',
  summary: 'Create a board owned by the caller',
  access: { scope: 'user' },
  body: titleBody,
  success: { status: 201, schema: 'board' },
  idempotent: 'caller',
  // The board and both sides of the membership, with a check that the caller's account still exists;
  // the rate limiter's count rides in the same transaction and is read back beside it (BatchGetItem:
  // docs/rate-limits.md, "POST /boards").
  table: ['dynamodb:PutItem', 'dynamodb:ConditionCheckItem', 'dynamodb:BatchGetItem'],
  metric: 'BoardCreated',
  cognito: [],
} satisfies RouteRow;

export const boardsGet = {
  id: 'boards.get',
  method: 'GET',
  path: '/boards/{id}',
  entry: 'functions/boards/get.ts',
  summary: 'Read a board with its columns and cards',
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'boardTree' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  // A tree too large for one answer (over 6 MB even compressed) is 422, naming its columns.
  errors: [422],
  cognito: [],
} satisfies RouteRow;

export const boardsRename = {
  id: 'boards.rename',
  method: 'PATCH',
  path: '/boards/{id}',
  entry: 'functions/boards/rename.ts',
  summary: 'Rename a board',
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  body: titleBody,
  success: { status: 200, schema: 'board' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;

export const boardsDelete = {
  id: 'boards.delete',
  method: 'DELETE',
  path: '/boards/{id}',
  entry: 'functions/boards/delete.ts',
  summary: 'Delete a board and everything on it (owners only)',
  access: { scope: 'board', via: 'board', role: 'owner' },
  params: idParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'],
  metric: 'BoardDeleted',
  cognito: [],
} satisfies RouteRow;

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
