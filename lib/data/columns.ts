import { randomUUID } from 'node:crypto';
import { NotFound } from '../domain/errors';
import { appendPosition } from '../domain/positions';
import type { BoardScope } from './access';
import { cancellationCodes, getItems, LostRace, queryAll, retryLostRaces, transactWrite } from './db';
import { type BoardRecord, type Column, type ColumnRecord, now, toColumn } from './records';
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
            Item: { ...keys.column(boardId, column.id), type: 'column', ...column },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { Put: { Item: { ...keys.columnLookup(column.id), type: 'column_lookup', board_id: boardId, card_version: 0 } } },
        {
          Update: {
            Key: keys.board(boardId),
            UpdateExpression: 'SET column_version = :next',
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
