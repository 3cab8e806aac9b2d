import { cardLabelParams, createCardBody, idParams, moveCardBody, updateCardBody } from '../contract/schemas';
import type { RouteRow } from './row';

/** Cards: appended to a column, then addressed by id; labels put on and taken off. */

export const cardsCreate = {
  id: 'cards.create',
  method: 'POST',
  path: '/columns/{id}/cards',
  entry: 'functions/cards/create.ts',
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

export const cardsGet = {
  id: 'cards.get',
  method: 'GET',
  path: '/cards/{id}',
  entry: 'functions/cards/get.ts',
  summary: 'Read a card',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem'],
  cognito: [],
} satisfies RouteRow;

export const cardsUpdate = {
  id: 'cards.update',
  method: 'PATCH',
  path: '/cards/{id}',
  entry: 'functions/cards/update.ts',
  summary: "Change a card's title or description",
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  body: updateCardBody,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;

export const cardsDelete = {
  id: 'cards.delete',
  method: 'DELETE',
  path: '/cards/{id}',
  entry: 'functions/cards/delete.ts',
  summary: 'Delete a card',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  metric: 'CardDeleted',
  cognito: [],
} satisfies RouteRow;

export const cardsMove = {
  id: 'cards.move',
  method: 'PATCH',
  path: '/cards/{id}/move',
  entry: 'functions/cards/move.ts',
  summary: 'Move a card between two neighbours, in its column or another of the board',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  body: moveCardBody,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem'],
  metric: 'CardMoved',
  cognito: [],
} satisfies RouteRow;

export const cardsLabelsAttach = {
  id: 'cards.labels.attach',
  method: 'PUT',
  path: '/cards/{id}/labels/{label_id}',
  entry: 'functions/cards/attach-label.ts',
  summary: "Put one of the board's labels on a card (idempotent; 20 a card)",
  access: { scope: 'board', via: 'card', role: 'member' },
  params: cardLabelParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  errors: [409],
  cognito: [],
} satisfies RouteRow;

export const cardsLabelsDetach = {
  id: 'cards.labels.detach',
  method: 'DELETE',
  path: '/cards/{id}/labels/{label_id}',
  entry: 'functions/cards/detach-label.ts',
  summary: 'Take a label off a card (idempotent)',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: cardLabelParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;
