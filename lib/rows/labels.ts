import { createLabelBody, idParams, updateLabelBody } from '../contract/schemas';
import { MAX_LABELS_PER_BOARD } from '../domain/limits';
import { LONGEST_ROUTE_SECONDS } from '../runtime/aws-limits';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/** A board's labels (cards carry them by id: lib/rows/cards.ts). */

export const labelsCreate = {
  id: 'labels.create',
  method: 'POST',
  path: '/boards/{id}/labels',
  entry: 'functions/labels/create.ts',
  logGroup: 'root',
  summary: 'Create a label on a board (any member; names unique case-insensitively, 100 a board)',
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  body: createLabelBody,
  success: { status: 201, schema: 'label' },
  idempotent: 'caller',
  table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  errors: [409],
  cognito: [],
} satisfies RouteRow;

export const labelsCreateText = {
  of: labelsCreate,
  tag: 'labels',
  description:
    'Creates a label on the board; any member may. Names are unique on the board compared case-insensitively (409, `code` `conflict`), at most 100 labels a board (409, `code` `limit_reached`).',
  problems: () => ({
    409: { code: 'limit_reached', detail: `A board can have at most ${MAX_LABELS_PER_BOARD} labels; delete one first.` },
  }),
} satisfies RouteText;

export const labelsList = {
  id: 'labels.list',
  method: 'GET',
  path: '/boards/{id}/labels',
  entry: 'functions/labels/list.ts',
  logGroup: 'root',
  summary: "List a board's labels by name (case-insensitively), then id",
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'labelList' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  cognito: [],
} satisfies RouteRow;

export const labelsListText = {
  of: labelsList,
  tag: 'labels',
  description: "The board's labels by name compared case-insensitively, then id.",
} satisfies RouteText;

export const labelsUpdate = {
  id: 'labels.update',
  method: 'PATCH',
  path: '/labels/{id}',
  entry: 'functions/labels/update.ts',
  logGroup: 'root',
  summary: 'Rename or recolour a label (null or omitted leaves a field as it is)',
  access: { scope: 'board', via: 'label', role: 'member' },
  params: idParams,
  body: updateLabelBody,
  success: { status: 200, schema: 'label' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
  errors: [409],
  cognito: [],
} satisfies RouteRow;

export const labelsUpdateText = {
  of: labelsUpdate,
  tag: 'labels',
  description:
    'Null-safe partial update: a field omitted or sent as null keeps its value. A new name must stay unique on the board (case-insensitively, 409).',
} satisfies RouteText;

export const labelsDelete = {
  id: 'labels.delete',
  method: 'DELETE',
  path: '/labels/{id}',
  entry: 'functions/labels/delete.ts',
  logGroup: 'root',
  summary: 'Delete a label; it is taken off every card that carries it',
  access: { scope: 'board', via: 'label', role: 'member' },
  params: idParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:Query'],
  cognito: [],
  timeoutSeconds: LONGEST_ROUTE_SECONDS,
} satisfies RouteRow;

export const labelsDeleteText = {
  of: labelsDelete,
  tag: 'labels',
  description: 'Deletes the label and takes it off every card that carries it.',
} satisfies RouteText;
