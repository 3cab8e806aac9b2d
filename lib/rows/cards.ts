import { cardLabelParams, createCardBody, idParams, moveCardBody, updateCardBody } from '../contract/schemas';
import { MAX_LABELS_PER_CARD } from '../domain/limits';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/** Cards: appended to a column, then addressed by id; labels put on and taken off. */

export const cardsCreate = {
  id: 'cards.create',
  method: 'POST',
  path: '/columns/{id}/cards',
  entry: 'functions/cards/create.ts',
  logGroup: 'root',
  summary: 'Append a card to a column',
  access: { scope: 'board', via: 'column', role: 'member' },
  params: idParams,
  body: createCardBody,
  success: { status: 201, schema: 'card' },
  idempotent: 'caller',
  table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  index: ['dynamodb:Query'],
  metric: 'CardCreated',
  cognito: [],
} satisfies RouteRow;

export const cardsCreateText = {
  of: cardsCreate,
  tag: 'cards',
  description:
    'Appends a card to the column: its position is the highest card position of the column + 1.0, or 1.0 for the first. An omitted or null description is stored as null.',
} satisfies RouteText;

export const cardsGet = {
  id: 'cards.get',
  method: 'GET',
  path: '/cards/{id}',
  entry: 'functions/cards/get.ts',
  logGroup: 'root',
  summary: 'Read a card',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem'],
  conditional: 'read',
  cognito: [],
} satisfies RouteRow;

export const cardsGetText = {
  of: cardsGet,
  tag: 'cards',
  description: 'Reads one card, with its `label_ids`.',
} satisfies RouteText;

export const cardsUpdate = {
  id: 'cards.update',
  method: 'PATCH',
  path: '/cards/{id}',
  entry: 'functions/cards/update.ts',
  logGroup: 'root',
  summary: "Change a card's title or description",
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  body: updateCardBody,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsUpdateText = {
  of: cardsUpdate,
  tag: 'cards',
  description:
    'Null-safe partial update: only fields sent with a non-null value change. An omitted field and a field sent as null both leave the stored value as it is, so a description can never be cleared back to null (send `""` to empty it). A body with neither field changes nothing and answers the card.',
} satisfies RouteText;

export const cardsDelete = {
  id: 'cards.delete',
  method: 'DELETE',
  path: '/cards/{id}',
  entry: 'functions/cards/delete.ts',
  logGroup: 'root',
  summary: 'Delete a card',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  metric: 'CardDeleted',
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsDeleteText = {
  of: cardsDelete,
  tag: 'cards',
  description: 'Deletes the card.',
} satisfies RouteText;

export const cardsMove = {
  id: 'cards.move',
  method: 'PATCH',
  path: '/cards/{id}/move',
  entry: 'functions/cards/move.ts',
  logGroup: 'root',
  summary: 'Move a card between two neighbours, in its column or another of the board',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  body: moveCardBody,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem'],
  metric: 'CardMoved',
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsMoveText = {
  of: cardsMove,
  tag: 'cards',
  description:
    'Moves the card into `target_column_id` (its own column or another of the board) between two neighbours: `before_id` is the card that will precede it, `after_id` the card that will follow it (null is the same as omitted). The new position is (before + after) / 2 with both, before + 1.0 with only `before_id`, after - 1.0 with only `after_id`, and 1.0 with neither. A target column of another board is 403 and nothing is written; a neighbour that does not exist is 404. A move to the place the card already has writes nothing (and sends no live event) and answers the card.',
} satisfies RouteText;

export const cardsLabelsAttach = {
  id: 'cards.labels.attach',
  method: 'PUT',
  path: '/cards/{id}/labels/{label_id}',
  entry: 'functions/cards/attach-label.ts',
  logGroup: 'root',
  summary: "Put one of the board's labels on a card (idempotent; 20 a card)",
  access: { scope: 'board', via: 'card', role: 'member' },
  params: cardLabelParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  errors: [409],
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsLabelsAttachText = {
  of: cardsLabelsAttach,
  tag: 'cards',
  description:
    "Puts one of the board's labels on the card; idempotent (already there: the card as it is). At most 20 labels a card (409, `code` `limit_reached`); a label of another board is 404. Answers the card.",
  problems: () => ({
    409: { code: 'limit_reached', detail: `A card can carry at most ${MAX_LABELS_PER_CARD} labels.` },
  }),
} satisfies RouteText;

export const cardsLabelsDetach = {
  id: 'cards.labels.detach',
  method: 'DELETE',
  path: '/cards/{id}/labels/{label_id}',
  entry: 'functions/cards/detach-label.ts',
  logGroup: 'root',
  summary: 'Take a label off a card (idempotent)',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: cardLabelParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsLabelsDetachText = {
  of: cardsLabelsDetach,
  tag: 'cards',
  description: 'Takes the label off the card; idempotent (not there: the card as it is). Answers the card.',
} satisfies RouteText;
