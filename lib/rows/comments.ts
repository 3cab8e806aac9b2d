import { commentBodyBody, commentsQuery, idParams } from '../contract/schemas';
import { DEFAULT_COMMENTS_PAGE, MAX_COMMENT_LENGTH, MAX_COMMENTS_PAGE } from '../domain/limits';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/**
 * Comments on a card: written on the card, then addressed by id. None honours If-Match, but a
 * create or a delete changes the card's entity tag (its body's `comment_count`).
 */

export const commentsCreate = {
  id: 'comments.create',
  method: 'POST',
  path: '/cards/{id}/comments',
  entry: 'functions/comments/create.ts',
  summary: 'Comment on a card (any member; archived cards too)',
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  body: commentBodyBody,
  success: { status: 201, schema: 'comment' },
  idempotent: 'caller',
  // The access check and, when the card was archived, restored or deleted meanwhile, its read at
  // both keys (BatchGetItem); the transaction's puts (comment, lookup, log item, idempotency
  // record) and updates (card, board).
  table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  cognito: [],
} satisfies RouteRow;

export const commentsCreateText = {
  of: commentsCreate,
  tag: 'comments',
  description: `Writes a comment on the card (archived or not) as the caller: \`body\` is 1 to ${MAX_COMMENT_LENGTH} characters, at least one of them not whitespace, stored as sent. The card's \`comment_count\` goes up by one, and with it its entity tag. Sends \`comment.created\` (no \`card.updated\`).`,
} satisfies RouteText;

export const commentsList = {
  id: 'comments.list',
  method: 'GET',
  path: '/cards/{id}/comments',
  entry: 'functions/comments/list.ts',
  summary: "List a card's comments, oldest first, a page at a time",
  access: { scope: 'board', via: 'card', role: 'member' },
  params: idParams,
  query: commentsQuery,
  success: { status: 200, schema: 'commentPage' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  cognito: [],
} satisfies RouteRow;

export const commentsListText = {
  of: commentsList,
  tag: 'comments',
  description:
    "The card's comments in the order they were written, oldest first, at most `limit`. `next` is the id to pass as `after` for the following page, null when this page ends the card's comments. `after` may name a comment deleted since: the page starts after where it was.",
  query: () => ({
    after: {
      description:
        "The `next` of the previous page: only comments written after that comment are returned (it may have been deleted since). Omitted: from the card's first comment.",
      schema: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 },
      example: '01935f4e-8a40-7c3e-9d2b-5f6a7b8c9d0e',
    },
    limit: {
      description: `The most comments to return: 1 to ${MAX_COMMENTS_PAGE}, default ${DEFAULT_COMMENTS_PAGE}.`,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_COMMENTS_PAGE, default: DEFAULT_COMMENTS_PAGE },
      example: DEFAULT_COMMENTS_PAGE,
    },
  }),
} satisfies RouteText;

export const commentsUpdate = {
  id: 'comments.update',
  method: 'PATCH',
  path: '/comments/{id}',
  entry: 'functions/comments/update.ts',
  summary: "Edit a comment's body (its author only)",
  access: { scope: 'board', via: 'comment', role: 'member' },
  params: idParams,
  body: commentBodyBody,
  success: { status: 200, schema: 'comment' },
  // The comment's update, the card's check, the board's update and the log item's put.
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;

export const commentsUpdateText = {
  of: commentsUpdate,
  tag: 'comments',
  description:
    "Replaces the comment's body and sets `edited_at`; only its author may (403 for any other member). The same body as stored changes nothing, sends no event and answers the comment as it is. Sends `comment.updated`.",
  problems: () => ({ 403: { code: 'forbidden', detail: 'Only the author of a comment may edit it.' } }),
} satisfies RouteText;

export const commentsDelete = {
  id: 'comments.delete',
  method: 'DELETE',
  path: '/comments/{id}',
  entry: 'functions/comments/delete.ts',
  summary: 'Delete a comment (its author or an owner of the board)',
  access: { scope: 'board', via: 'comment', role: 'member' },
  params: idParams,
  success: { status: 204 },
  // The comment's and its lookup's deletes, the card's and the board's updates, the log item's
  // put; the card's read at both keys when it was archived or restored meanwhile.
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  cognito: [],
} satisfies RouteRow;

export const commentsDeleteText = {
  of: commentsDelete,
  tag: 'comments',
  description:
    "Deletes the comment; its author or an owner of the board may (403 for any other member). The card's `comment_count` goes down by one, and with it its entity tag. Sends `comment.deleted` with `comment_id` and `card_id`.",
  problems: () => ({
    403: { code: 'forbidden', detail: 'Only the author of a comment or an owner of the board may delete it.' },
  }),
} satisfies RouteText;
