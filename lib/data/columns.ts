import { randomUUID } from 'node:crypto';
import { NotFound } from '../domain/errors';
import { byPosition } from '../domain/ordering';
import { appendPosition, positionBetween } from '../domain/positions';
import { actorOf, type BoardScope, relatedOnBoard, type ScopeVia } from './access';
import { WRITE_ONLY } from './board-turns';
import { queryColumnCards } from './cards';
import { deleteCardComments } from './comments';
import { deleteItems, type Item, type NamedItems, queryAll, removeFromSet } from './db';
import { ChangeRaceLost, changeRefusal, commitChange, retryChange } from './event-log';
import { type CardRecord, type Column, type ColumnRecord, type ColumnWithCards, now, toCard, toColumn } from './records';
import { type ItemKey, keys } from './table';

export async function highestColumnPosition(boardId: string): Promise<number | undefined> {
  const columns = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':prefix': keys.columnPrefix },
    ProjectionExpression: '#position',
    ExpressionAttributeNames: { '#position': 'position' },
  });
  return columns.length === 0 ? undefined : Math.max(...columns.map((c) => c.position as number));
}

/**
 * Appends a column: highest position + 1.0. Concurrent creates are serialised by the board's
 * `seq`, read before the columns are queried and checked in the same transaction that writes the
 * column, so two creates never compute their position from the same state. A lost race gets the
 * board as it now is from the failed condition and queries the columns again.
 */
export async function createColumn(scope: BoardScope, title: string): Promise<Column> {
  const { boardId } = scope;
  return retryChange({ board: scope.board, item: undefined }, async ({ board }) => {
    const column: ColumnRecord = {
      id: randomUUID(),
      board_id: boardId,
      title,
      position: appendPosition(await highestColumnPosition(boardId)),
      created_at: now(),
    };
    await commitChange({
      boardId,
      seen: board,
      kind: 'column.created',
      actor: actorOf(scope),
      fields: { column: toColumn(column) },
      writes: {
        column: {
          Put: {
            Item: { ...keys.column(boardId, column.id), type: 'column', ...column },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        lookup: { Put: { Item: { ...keys.columnLookup(column.id), type: 'column_lookup', board_id: boardId, card_version: 0 } } },
      },
    });
    return toColumn(column);
  });
}

/** The column and its cards, in one strongly consistent index query (after the access check). */
export async function readColumnWithCards(scope: ScopeVia<'column'>): Promise<ColumnWithCards> {
  const { column } = scope;
  const cards = (await queryColumnCards(scope.boardId, column.id, { whole: true })) as unknown as CardRecord[];
  return { ...toColumn(column), cards: cards.sort(byPosition).map((card) => toCard(card, scope.board)) };
}

export async function renameColumn(scope: ScopeVia<'column'>, title: string): Promise<Column> {
  return changeColumn(scope, 'column.updated', { title });
}

/**
 * A column's title or position, with its event; a value it already has writes nothing. The board's
 * `seq` condition makes the column as read the column as stored when the write lands; a lost race
 * reads it again.
 */
async function changeColumn(
  scope: ScopeVia<'column'>,
  kind: 'column.updated' | 'column.moved',
  fields: { title: string } | { position: number },
): Promise<Column> {
  const [[name, value]] = Object.entries(fields) as [[string, unknown]];
  return retryChange({ board: scope.board, item: scope.column, callsAfterTurn: WRITE_ONLY }, async ({ board, item: column }) => {
    if ((column as unknown as Record<string, unknown>)[name] === value) return toColumn(column);
    const changed = toColumn({ ...column, ...fields });
    const writes = {
      column: {
        Update: {
          Key: keys.column(scope.boardId, column.id),
          UpdateExpression: 'SET #field = :value',
          // The column as read: when only the board's seq moved on, the attempt goes again
          // on it with no read; when the column itself changed, its condition returns it.
          ConditionExpression: 'attribute_exists(pk) AND title = :readTitle AND #position = :readPosition',
          ExpressionAttributeNames: { '#field': name, '#position': 'position' },
          ExpressionAttributeValues: { ':value': value, ':readTitle': column.title, ':readPosition': column.position },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId: scope.boardId,
        seen: board,
        kind,
        actor: actorOf(scope),
        fields: { column: changed },
        writes,
        gone: () => new NotFound('Column'),
      });
      return changed;
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (refusal?.failed.has('column')) {
        const current = refusal.itemAt<ColumnRecord>('column');
        if (!current) throw new NotFound('Column');
        throw new ChangeRaceLost(refusal.board ?? board, current);
      }
      throw error;
    }
  });
}

/**
 * Deletes a column with no reachable half-state, whatever its number of cards: one transaction
 * removes the column and its lookup, names the column in the board's `deleting_columns` (from
 * then on its cards answer 404 everywhere, and creates and moves into it fail their condition
 * checks) and writes `column.deleted`. Its cards are removed after the answer by the collector
 * (deleteColumnCards), fed by that log item through the table's stream.
 */
export async function deleteColumn(scope: ScopeVia<'column'>): Promise<void> {
  const { boardId, column } = scope;
  const writes = {
    column: { Delete: { Key: keys.column(boardId, column.id), ConditionExpression: 'attribute_exists(pk)' } },
    lookup: { Delete: { Key: keys.columnLookup(column.id) } },
  } satisfies NamedItems;
  await retryChange({ board: scope.board, item: undefined, callsAfterTurn: WRITE_ONLY }, async ({ board }) => {
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'column.deleted',
        actor: actorOf(scope),
        // Its cards' deletions need no events of their own (realtime contract).
        fields: { column_id: column.id },
        writes,
        board: { add: ['deleting_columns :deleting'], values: { ':deleting': new Set([column.id]) } },
        gone: () => new NotFound('Column'),
      });
    } catch (error) {
      if (changeRefusal(error, writes)?.failed.has('column')) throw new NotFound('Column');
      throw error;
    }
  });
}

/** How many cards' comments the column collector removes at a time. */
const COMMENT_CLEANUP_PARALLELISM = 8;

/**
 * The collector's work after a column's deletion: its cards, archived ones included (an archived
 * card keeps its `column_id`), the comments of every such card that has some, the comments'
 * lookups and the cards' own lookups (version 4 ids); then the column's name off the board's `deleting_columns`. Safe to run again after an
 * interruption: comments go before their card, and lookups before their items, so that what a
 * run leaves is always found again by the next from the items that remain.
 */
export async function deleteColumnCards(boardId: string, columnId: string): Promise<void> {
  const [active, archived] = await Promise.all([
    // Whole cards from the position index (its ALL_ATTRIBUTES fetches each from the table in the
    // same call), for their comment_count: the base table's CARD# range would read every card of
    // the board to keep this column's.
    queryColumnCards(boardId, columnId, { whole: true }),
    // Archived cards are outside the index: the board's ARCHIVED# range, filtered by column.
    queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: 'column_id = :column',
      ExpressionAttributeValues: {
        ':pk': keys.boardPartition(boardId),
        ':prefix': keys.archivedCardPrefix,
        ':column': columnId,
      },
      ProjectionExpression: 'pk, sk, id, comment_count',
    }),
  ]);
  const cards = [...active, ...archived] as (Item & Pick<CardRecord, 'id' | 'comment_count'>)[];
  const commented = cards.filter((card) => (card.comment_count ?? 0) > 0);
  for (let i = 0; i < commented.length; i += COMMENT_CLEANUP_PARALLELISM) {
    const slice = commented.slice(i, i + COMMENT_CLEANUP_PARALLELISM);
    await Promise.all(slice.map((card) => deleteCardComments(boardId, card.id)));
  }
  await deleteItems(cards.flatMap((card) => keys.cardOwnLookup(card.id) ?? []));
  await deleteItems(cards.map((card): ItemKey => ({ pk: card.pk, sk: card.sk })));
  // A board deleted meanwhile has nothing to clear.
  await removeFromSet(keys.board(boardId), 'deleting_columns', columnId);
}

/** Moves a column between two columns of its board, by the spec's neighbour table. */
export async function moveColumn(
  scope: ScopeVia<'column'>,
  move: { before_id?: string | null; after_id?: string | null },
): Promise<Column> {
  const before = relatedOnBoard(scope.relatedColumns, scope.boardId, move.before_id, 'The column named in before_id');
  const after = relatedOnBoard(scope.relatedColumns, scope.boardId, move.after_id, 'The column named in after_id');
  return changeColumn(scope, 'column.moved', { position: positionBetween(before?.position, after?.position) });
}
