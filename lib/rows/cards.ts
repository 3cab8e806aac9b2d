import { cardAssigneeParams, cardLabelParams, createCardBody, idParams, moveCardBody, updateCardBody } from '../contract/schemas';
import { MAX_ASSIGNEES_PER_CARD, MAX_LABELS_PER_CARD } from '../domain/limits';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/**
 * Cards: appended to a column, then addressed by id; labels and assignees put on and taken off, a
 * due date cleared, archived and restored (an archived card is addressed by id like any other).
 */

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
  description:
    'Reads one card, archived or not, with its `label_ids`, `due_at`, `assignee_ids`, `archived_at` and `comment_count` (its comments are read with `GET /cards/{id}/comments`).',
} satisfies RouteText;

export const cardsUpdate = {
  id: 'cards.update',
  method: 'PATCH',
  path: '/cards/{id}',
  entry: 'functions/cards/update.ts',
  logGroup: 'root',
  summary: "Change a card's title, description or due date",
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
    'Null-safe partial update: only fields sent with a non-null value change. An omitted field and a field sent as null both leave the stored value as it is, so a description can never be cleared back to null (send `""` to empty it) and a due date is cleared with `DELETE /cards/{id}/due`. A body with no field, or only the values the card already has, changes nothing (no event) and answers the card. Works on an archived card too.',
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
  description: 'Deletes the card, archived or not, and its comments.',
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
  errors: [409],
  metric: 'CardMoved',
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsMoveText = {
  of: cardsMove,
  tag: 'cards',
  description:
    'Moves the card into `target_column_id` (its own column or another of the board) between two neighbours: `before_id` is the card that will precede it, `after_id` the card that will follow it (null is the same as omitted). The new position is (before + after) / 2 with both, before + 1.0 with only `before_id`, after - 1.0 with only `after_id`, and 1.0 with neither. A target column of another board is 403 and nothing is written; a neighbour that does not exist is 404. A move to the place the card already has writes nothing (and sends no live event) and answers the card. An archived card is in no column: moving it is 409 (`code` `archived`) until it is restored.',
  problems: () => ({
    409: { code: 'archived', detail: 'The card is archived: restore it (POST /cards/{id}/restore) before moving it.' },
  }),
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

export const cardsDueClear = {
  id: 'cards.due.clear',
  method: 'DELETE',
  path: '/cards/{id}/due',
  entry: 'functions/cards/clear-due.ts',
  summary: "Clear a card's due date",
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsDueClearText = {
  of: cardsDueClear,
  tag: 'cards',
  description:
    'Clears the due date (`due_at` null) and answers the card; a card without one changes nothing (no event). A due date is set with `PATCH /cards/{id}`.',
} satisfies RouteText;

/**
 * The member map of a board made before assignees is built on its first assignment: a Query of
 * its members and one UpdateItem, once per such board (lib/data/assignees.ts).
 */
const ASSIGNEE_TABLE_ACTIONS: RouteRow['table'] = [
  'dynamodb:BatchGetItem',
  'dynamodb:UpdateItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
];

export const cardsAssigneesAdd = {
  id: 'cards.assignees.add',
  method: 'PUT',
  path: '/cards/{id}/assignees/{user_id}',
  entry: 'functions/cards/assign.ts',
  summary: `Assign a member of the board to a card (idempotent; ${MAX_ASSIGNEES_PER_CARD} a card)`,
  access: { scope: 'board', via: 'card', role: 'member' },
  params: cardAssigneeParams,
  success: { status: 200, schema: 'card' },
  table: ASSIGNEE_TABLE_ACTIONS,
  errors: [409],
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsAssigneesAddText = {
  of: cardsAssigneesAdd,
  tag: 'cards',
  description: `Any member may assign any member of the card's board; idempotent (already assigned: the card as it is, no event). A user who is not a member of the board is 409 (\`code\` \`not_a_member\`); at most ${MAX_ASSIGNEES_PER_CARD} assignees a card (409, \`code\` \`limit_reached\`). \`assignee_ids\` lists them in the order they were assigned; a member who leaves the board is gone from every card at once. Answers the card.`,
  problems: () => ({
    409: { code: 'not_a_member', detail: 'This user is not a member of the board: only members can be assigned.' },
  }),
} satisfies RouteText;

export const cardsAssigneesRemove = {
  id: 'cards.assignees.remove',
  method: 'DELETE',
  path: '/cards/{id}/assignees/{user_id}',
  entry: 'functions/cards/unassign.ts',
  summary: 'Take an assignee off a card (idempotent)',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: cardAssigneeParams,
  success: { status: 200, schema: 'card' },
  table: ASSIGNEE_TABLE_ACTIONS,
  errors: [409],
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsAssigneesRemoveText = {
  of: cardsAssigneesRemove,
  tag: 'cards',
  description:
    'Takes the member off the card; idempotent (not assigned: the card as it is, no event). A user who is not a member of the board is 409 (`code` `not_a_member`). Answers the card.',
  problems: () => ({
    409: { code: 'not_a_member', detail: 'This user is not a member of the board: only members can be assigned.' },
  }),
} satisfies RouteText;

export const cardsArchive = {
  id: 'cards.archive',
  method: 'POST',
  path: '/cards/{id}/archive',
  entry: 'functions/cards/archive.ts',
  summary: 'Archive a card: it leaves its column, and stays readable by id',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  metric: 'CardArchived',
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsArchiveText = {
  of: cardsArchive,
  tag: 'cards',
  description:
    'Archives the card and answers it with `archived_at` set. An archived card leaves its column: it is in no tree and takes no part in positions, but `GET /cards/{id}`, `PATCH /cards/{id}`, its comments and `DELETE /cards/{id}` work on it; `GET /boards/{id}/archive` lists it. Archiving an archived card changes nothing (no event), so a retry is safe without an Idempotency-Key.',
} satisfies RouteText;

export const cardsRestore = {
  id: 'cards.restore',
  method: 'POST',
  path: '/cards/{id}/restore',
  entry: 'functions/cards/restore.ts',
  summary: 'Restore an archived card to the end of its column',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'card' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  index: ['dynamodb:Query'],
  metric: 'CardRestored',
  conditional: 'write',
  cognito: [],
} satisfies RouteRow;

export const cardsRestoreText = {
  of: cardsRestore,
  tag: 'cards',
  description:
    'Puts an archived card back in its column, at the end (highest card position + 1.0, or 1.0), with `archived_at` null, and answers it. Restoring a card that is not archived changes nothing (no event), so a retry is safe without an Idempotency-Key.',
} satisfies RouteText;
