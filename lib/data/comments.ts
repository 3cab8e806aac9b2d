import { Forbidden, NotFound } from '../domain/errors';
import { uuid7 } from '../domain/uuid7';
import { actorOf, cardAtEitherKey, type ScopeVia } from './access';
import { WRITE_ONLY } from './board-turns';
import { notDeletingColumn } from './cards';
import { deleteItems, type Item, type NamedItems, queryAll, queryPages } from './db';
import { ChangeRaceLost, changeRefusal, commitChange, retryChange } from './event-log';
import { type CardRecord, type Comment, type CommentRecord, now, toComment } from './records';
import { cardKeyOf, type ItemKey, keys } from './table';

/**
 * Comments on a card (docs/data-model.md). A comment is `BOARD#<board> / ~COMMENT#<card>#<id>`
 * with a lookup `COMMENT#<id>` naming its board and card. Ids are UUIDv7, so a card's comments
 * are one sort-key range in the order written and a page's `after` is the key to go on from. The
 * card keeps `comment_count` in the same transaction as every create and delete, with its write
 * counter (`version`: the card's body, and so its entity tag, changed). Every write is a
 * numbered change of the board (commitChange): `comment.created`, `comment.updated` and
 * `comment.deleted` reach sockets and webhooks like every event, and no `card.updated` is sent.
 * A card's comments go with it: its deletion's log item carries `comment_count`, and the
 * collector removes them after the answer (deleteCardComments), as it does a deleted column's.
 */

/**
 * The card's part in a create or delete: `comment_count` moved by `step` and the write counter by
 * one, at the key the card had when read (CARD# or ARCHIVED#), in the column it was read in. A
 * card moved meanwhile fails the condition and comes back as it now is (ALL_OLD), so the next
 * attempt checks its new column's deletion; one archived, restored or deleted meanwhile is not at
 * that key, and `cardAfterRefusal` reads it where it now is.
 */
function countOnCard(boardId: string, card: CardRecord, step: 1 | -1) {
  return {
    Update: {
      ...asReadIn(boardId, card),
      UpdateExpression: 'ADD comment_count :step, #version :one',
      ExpressionAttributeNames: { '#version': 'version' },
      ExpressionAttributeValues: { ':step': step, ':one': 1, ':column': card.column_id },
    },
  };
}

/** A comment edit's check of its card: at the key and in the column it was read in, as countOnCard's. */
function cardUnchangedBy(boardId: string, card: CardRecord) {
  return { ConditionCheck: { ...asReadIn(boardId, card), ExpressionAttributeValues: { ':column': card.column_id } } };
}

/** The card at the key and in the column it was read in; a failed check returns it as it now is. */
const asReadIn = (boardId: string, card: CardRecord) => ({
  Key: cardKeyOf(boardId, card),
  ConditionExpression: 'attribute_exists(pk) AND column_id = :column',
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
});

/**
 * The card as it now is after its update in a comment's transaction failed: from the failed
 * condition, or, when it was not at the key written (archived, restored or deleted meanwhile), at
 * both keys (one more round trip, only in that race). Gone from both: `gone()`.
 */
async function cardAfterRefusal(
  current: CardRecord | undefined,
  boardId: string,
  cardId: string,
  gone: () => Error,
): Promise<CardRecord> {
  const card = current ?? (await cardAtEitherKey(boardId, cardId));
  if (!card) throw gone();
  return card;
}

/**
 * `POST /cards/{id}/comments`: one transaction puts the comment and its lookup, adds one to the
 * card's `comment_count` and writes `comment.created`. The card's update requires the card to
 * exist, so a comment racing its card's deletion either commits first (and the deletion's log
 * item then counts it, for the collector) or fails: it never outlives the card.
 */
export async function createComment(scope: ScopeVia<'card'>, body: string): Promise<Comment> {
  const { boardId } = scope;
  const gone = () => new NotFound('Card');
  return retryChange({ board: scope.board, item: scope.card, callsAfterTurn: WRITE_ONLY }, async ({ board, item: card }) => {
    const comment: CommentRecord = {
      id: uuid7(),
      board_id: boardId,
      card_id: card.id,
      author_id: actorOf(scope),
      body,
      created_at: now(),
      edited_at: null,
    };
    const shown = toComment(comment);
    const writes = {
      comment: {
        Put: {
          Item: { ...keys.comment(boardId, card.id, comment.id), type: 'comment', ...comment },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      lookup: {
        Put: { Item: { ...keys.commentLookup(comment.id), type: 'comment_lookup', board_id: boardId, card_id: card.id } },
      },
      card: countOnCard(boardId, card, 1),
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'comment.created',
        actor: actorOf(scope),
        fields: { comment: shown },
        writes,
        board: notDeletingColumn(card.column_id),
        gone,
        boardRefused: gone,
      });
      return shown;
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (!refusal?.failed.has('card')) throw error;
      const current = await cardAfterRefusal(refusal.itemAt<CardRecord>('card'), boardId, card.id, gone);
      throw new ChangeRaceLost(refusal.board ?? board, current);
    }
  });
}

/**
 * `GET /cards/{id}/comments`: up to `limit` comments after `after` (a comment id, deleted or not:
 * it is only where the range starts), oldest first. One strongly consistent Query of the card's
 * range for `limit + 1`, so that `next` is set only when another comment follows; a page cut at
 * DynamoDB's 1 MB (100 bodies of 4,096 characters can pass it) is followed to the next, only then.
 */
export async function listComments(
  scope: ScopeVia<'card'>,
  after: string | undefined,
  limit: number,
): Promise<{ comments: Comment[]; next: string | null }> {
  const { boardId, card } = scope;
  const found: CommentRecord[] = [];
  await queryPages(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':prefix': keys.cardCommentsPrefix(card.id) },
      Limit: limit + 1,
    },
    (page) => {
      found.push(...(page as unknown as CommentRecord[]));
      return found.length > limit ? false : undefined;
    },
    after ? keys.comment(boardId, card.id, after) : undefined,
  );
  const comments = found.slice(0, limit).map(toComment);
  return { comments, next: found.length > limit ? (comments.at(-1)?.id ?? null) : null };
}

/**
 * `PATCH /comments/{id}`: the author alone may edit (403 for anyone else, after the access check's
 * 404 and 403). The same body writes nothing, sends no event and answers the comment as it is.
 * The transaction requires the comment to still be there, the card to be where and in the column
 * it was read in (a card archived, restored or moved meanwhile is read again, and the edit goes
 * again), and that column not to be being deleted.
 */
export async function updateComment(scope: ScopeVia<'comment'>, body: string): Promise<Comment> {
  const { boardId } = scope;
  let { card } = scope;
  const callerId = actorOf(scope);
  const gone = () => new NotFound('Comment');
  const first = { board: scope.board, item: scope.comment, callsAfterTurn: WRITE_ONLY };
  return retryChange(first, async ({ board, item: comment }) => {
    if (comment.author_id !== callerId) throw new Forbidden('Only the author of a comment may edit it.');
    if (comment.body === body) return toComment(comment);
    const edited = toComment({ ...comment, body, edited_at: now() });
    const writes = {
      comment: {
        Update: {
          Key: keys.comment(boardId, comment.card_id, comment.id),
          UpdateExpression: 'SET body = :body, edited_at = :editedAt',
          ConditionExpression: 'attribute_exists(pk) AND author_id = :author',
          ExpressionAttributeValues: { ':body': body, ':editedAt': edited.edited_at, ':author': callerId },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      card: cardUnchangedBy(boardId, card),
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'comment.updated',
        actor: callerId,
        fields: { comment: edited },
        writes,
        board: notDeletingColumn(card.column_id),
        gone,
        boardRefused: gone,
      });
      return edited;
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (refusal?.failed.has('card')) {
        card = await cardAfterRefusal(refusal.itemAt<CardRecord>('card'), boardId, card.id, gone);
        throw new ChangeRaceLost(refusal.board ?? board, comment);
      }
      if (!refusal?.failed.has('comment')) throw error;
      // Deleted meanwhile: 404; edited meanwhile by its author: go again on it as it now is.
      const current = refusal.itemAt<CommentRecord>('comment');
      if (!current) throw gone();
      throw new ChangeRaceLost(refusal.board ?? board, current);
    }
  });
}

/**
 * `DELETE /comments/{id}`: the author or an owner of the board (403 for anyone else). One
 * transaction deletes the comment and its lookup, takes one off the card's `comment_count` and
 * writes `comment.deleted`; a comment already gone, or whose card is, is 404.
 */
export async function deleteComment(scope: ScopeVia<'comment'>): Promise<void> {
  const { boardId, comment } = scope;
  if (comment.author_id !== actorOf(scope) && scope.member.role !== 'owner') {
    throw new Forbidden('Only the author of a comment or an owner of the board may delete it.');
  }
  const gone = () => new NotFound('Comment');
  await retryChange({ board: scope.board, item: scope.card, callsAfterTurn: WRITE_ONLY }, async ({ board, item: card }) => {
    const writes = {
      comment: {
        Delete: { Key: keys.comment(boardId, card.id, comment.id), ConditionExpression: 'attribute_exists(pk)' },
      },
      lookup: { Delete: { Key: keys.commentLookup(comment.id) } },
      card: countOnCard(boardId, card, -1),
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'comment.deleted',
        actor: actorOf(scope),
        fields: { comment_id: comment.id, card_id: card.id },
        writes,
        board: notDeletingColumn(card.column_id),
        gone,
        boardRefused: gone,
      });
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (refusal?.failed.has('comment')) throw gone();
      if (!refusal?.failed.has('card')) throw error;
      const current = await cardAfterRefusal(refusal.itemAt<CardRecord>('card'), boardId, card.id, gone);
      throw new ChangeRaceLost(refusal.board ?? board, current);
    }
  });
}

/**
 * The collector's work for a card deleted with comments, and for each card with comments of a
 * deleted column: its comments and their lookups. The lookups go first, so that an interrupted
 * run leaves comment items, which the next run finds by the card's range, never a lookup whose
 * comment is gone. Safe to run again.
 */
export async function deleteCardComments(boardId: string, cardId: string): Promise<void> {
  const comments: Item[] = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':prefix': keys.cardCommentsPrefix(cardId) },
    ProjectionExpression: 'pk, sk, id',
  });
  await deleteItems(comments.map((comment) => keys.commentLookup(comment.id as string)));
  await deleteItems(comments.map((comment): ItemKey => ({ pk: comment.pk, sk: comment.sk })));
}
