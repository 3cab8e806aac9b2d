import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NotFound } from '../domain/errors';
import { byPosition } from '../domain/ordering';
import { appendPosition, positionBetween } from '../domain/positions';
import { actorOf, type BoardScope, relatedOnBoard } from './access';
import { queryColumnCards } from './cards';
import { eventItemPut, STAMP_ATTRIBUTE, stamp } from './changes';
import {
  deleteItems,
  documentClient,
  getItems,
  isConditionFailure,
  LostRace,
  queryAll,
  retryLostRaces,
  tableName,
  transactWrite,
  updateExisting,
} from './db';
import {
  type BoardRecord,
  type CardRecord,
  type Column,
  type ColumnRecord,
  type ColumnWithCards,
  now,
  toCard,
  toColumn,
} from './records';
import { cancellationCodes } from './sdk-errors';
import { keys } from './table';

async function highestColumnPosition(boardId: string): Promise<number | undefined> {
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
 * `column_version`, read before the columns are queried and checked in the same transaction
 * that writes the column, so two creates never compute their position from the same state.
 */
export async function createColumn(scope: BoardScope, title: string): Promise<Column> {
  const { boardId } = scope;
  return retryLostRaces(async (attempt) => {
    const version = attempt === 0 ? (scope.board.column_version ?? 0) : await readColumnVersion(boardId);
    const column: ColumnRecord = {
      id: randomUUID(),
      board_id: boardId,
      title,
      position: appendPosition(await highestColumnPosition(boardId)),
      created_at: now(),
    };
    try {
      await transactWrite([
        {
          Put: {
            Item: {
              ...keys.column(boardId, column.id),
              type: 'column',
              ...column,
              [STAMP_ATTRIBUTE]: stamp('column.created', actorOf(scope)),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { Put: { Item: { ...keys.columnLookup(column.id), type: 'column_lookup', board_id: boardId, card_version: 0 } } },
        {
          Update: {
            Key: keys.board(boardId),
            // The column's own item carries this change's event; the board's counter is not one.
            UpdateExpression: 'SET column_version = :next REMOVE ev',
            ConditionExpression: 'column_version = :seen',
            ExpressionAttributeValues: { ':seen': version, ':next': version + 1 },
          },
        },
      ]);
      return toColumn(column);
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[2] === 'ConditionalCheckFailed') throw new LostRace();
      throw error;
    }
  });
}

async function readColumnVersion(boardId: string): Promise<number> {
  const board = (await getItems([keys.board(boardId)])).get<BoardRecord>(keys.board(boardId));
  if (!board) throw new NotFound('Board');
  return board.column_version ?? 0;
}

/** The column and its cards, in one strongly consistent index query (after the access check). */
export async function readColumnWithCards(scope: BoardScope): Promise<ColumnWithCards> {
  const column = scope.column!;
  const cards = (await queryColumnCards(scope.boardId, column.id, { whole: true })) as unknown as CardRecord[];
  return { ...toColumn(column), cards: cards.sort(byPosition).map((card) => toCard(card, scope.board.labels)) };
}

export async function renameColumn(scope: BoardScope, title: string): Promise<Column> {
  const change = stamp('column.updated', actorOf(scope));
  return toColumn(
    await updateExisting<ColumnRecord>(
      keys.column(scope.boardId, scope.column!.id),
      { title, [STAMP_ATTRIBUTE]: change },
      'Column',
      { changes: { title } },
    ),
  );
}

/**
 * Deletes a column with no reachable half-state, whatever its number of cards: one transaction
 * removes the column and its lookup, names the column in the board's `deleting_columns` (from
 * then on its cards answer 404 everywhere, and creates and moves into it fail their condition
 * checks) and writes `column.deleted`. Its cards are removed after the answer by the collector
 * (deleteColumnCards), fed by that event item through the table's stream.
 */
export async function deleteColumn(scope: BoardScope): Promise<void> {
  const column = scope.column!;
  const { boardId } = scope;
  try {
    await transactWrite([
      { Delete: { Key: keys.column(boardId, column.id), ConditionExpression: 'attribute_exists(pk)' } },
      { Delete: { Key: keys.columnLookup(column.id) } },
      {
        Update: {
          Key: keys.board(boardId),
          UpdateExpression: 'ADD deleting_columns :column REMOVE ev',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':column': new Set([column.id]) },
        },
      },
      // Its cards' deletions need no events of their own (realtime contract).
      eventItemPut(boardId, stamp('column.deleted', actorOf(scope), { column_id: column.id })),
    ]);
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes?.[0] === 'ConditionalCheckFailed' || codes?.[2] === 'ConditionalCheckFailed') throw new NotFound('Column');
    throw error;
  }
}

/**
 * The collector's work after a column's deletion: its cards and their lookups, then the column's
 * name off the board's `deleting_columns`. Safe to run again after an interruption.
 */
export async function deleteColumnCards(boardId: string, columnId: string): Promise<void> {
  const cards = await queryColumnCards(boardId, columnId);
  await deleteItems(
    cards.flatMap((card) => [{ pk: card.pk, sk: card.sk }, keys.cardLookup(card.sk.slice(keys.cardPrefix.length))]),
  );
  await documentClient
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.board(boardId),
        UpdateExpression: 'DELETE deleting_columns :column REMOVE ev',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':column': new Set([columnId]) },
      }),
    )
    .catch((error) => {
      if (!isConditionFailure(error)) throw error; // the board itself was deleted meanwhile: nothing to clear
    });
}

/** Moves a column between two columns of its board, by the spec's neighbour table. */
export async function moveColumn(
  scope: BoardScope,
  move: { before_id?: string | null; after_id?: string | null },
): Promise<Column> {
  const before = relatedOnBoard(scope.relatedColumns, scope.boardId, move.before_id, 'The column named in before_id');
  const after = relatedOnBoard(scope.relatedColumns, scope.boardId, move.after_id, 'The column named in after_id');
  const position = positionBetween(before?.position, after?.position);
  const change = stamp('column.moved', actorOf(scope));
  return toColumn(
    await updateExisting<ColumnRecord>(
      keys.column(scope.boardId, scope.column!.id),
      { position, [STAMP_ATTRIBUTE]: change },
      'Column',
      { changes: { position } },
    ),
  );
}
