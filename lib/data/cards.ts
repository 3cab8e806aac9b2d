import { randomUUID } from 'node:crypto';
import { Forbidden, NotFound } from '../domain/errors';
import { appendPosition, positionBetween } from '../domain/positions';
import { actorOf, type BoardScope, relatedOnBoard } from './access';
import { getItems, type Item, itemAtCancellation, LostRace, queryPages, retryLostRaces } from './db';
import { type BoardItemChange, commitChange } from './event-log';
import { type BoardRecord, type Card, type CardRecord, type ColumnLookup, now, toCard } from './records';
import { cancellationCodes } from './sdk-errors';
import { COLUMN_POSITION_INDEX, columnPositionKey, columnPositionPrefix, decodePosition, keys } from './table';

/**
 * A column's cards in position order from the position index, strongly consistent: keys only,
 * or whole cards (`whole`: the index projects keys, and ALL_ATTRIBUTES fetches the rest from the
 * table within the same call).
 */
export async function queryColumnCards(
  boardId: string,
  columnId: string,
  options: { highestFirst?: boolean; limit?: number; whole?: boolean } = {},
): Promise<Item[]> {
  const items: Item[] = [];
  await queryPages(
    {
      IndexName: COLUMN_POSITION_INDEX,
      KeyConditionExpression: 'pk = :pk AND begins_with(colpos, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':prefix': columnPositionPrefix(columnId) },
      ScanIndexForward: !options.highestFirst,
      ...(options.limit ? { Limit: options.limit } : {}),
      ...(options.whole ? { Select: 'ALL_ATTRIBUTES' as const } : {}),
    },
    (page) => {
      items.push(...page);
      // With a limit the first page holds the answer: never follow LastEvaluatedKey.
      return options.limit ? false : undefined;
    },
  );
  return items;
}

/** Highest card position in a column: one index query, highest first, one key. */
export async function highestCardPosition(boardId: string, columnId: string): Promise<number | undefined> {
  const [top] = await queryColumnCards(boardId, columnId, { highestFirst: true, limit: 1 });
  return top ? decodePosition((top.colpos as string).slice(columnPositionPrefix(columnId).length)) : undefined;
}

/**
 * Appends a card at the highest position in its column + 1.0. Creates in one column are
 * serialised by `card_version` on the column's lookup item: it is read in the request's first
 * round trip, before the highest position is queried (beside the second), and the transaction
 * commits only if it is unchanged, so two creates never derive their positions from the same
 * state. (The board's `seq`, read in the second round trip, may be newer than that query.) Moves
 * do not touch it (the spec lets a move write nothing but the card), and moves may produce equal
 * positions by the spec's own arithmetic anyway; creates alone are guaranteed distinct positions.
 * A lost race re-reads the version and the board in one round trip, then the highest position.
 */
export async function createCard(
  scope: BoardScope,
  input: { title: string; description?: string | null },
  highestAtFirstRead: number | undefined,
): Promise<Card> {
  const column = scope.column!;
  const { boardId } = scope;
  const state = { board: scope.board };
  return retryLostRaces(async (attempt) => {
    let version = scope.columnCardVersion ?? 0;
    let highest = highestAtFirstRead;
    if (attempt > 0) {
      const found = await getItems([keys.columnLookup(column.id), keys.board(boardId)]);
      const lookup = found.get<ColumnLookup>(keys.columnLookup(column.id));
      const board = found.get<BoardRecord>(keys.board(boardId));
      if (!lookup || !board || board.deleting_columns?.has(column.id)) throw new NotFound('Column');
      version = lookup.card_version;
      state.board = board;
      highest = await highestCardPosition(boardId, column.id);
    }
    const card: CardRecord = {
      id: randomUUID(),
      board_id: boardId,
      column_id: column.id,
      title: input.title,
      description: input.description ?? null,
      position: appendPosition(highest),
      created_at: now(),
    };
    const shown = toCard(card, state.board.labels);
    try {
      await commitChange({
        boardId,
        state,
        kind: 'card.created',
        actor: actorOf(scope),
        fields: { card: shown },
        writes: [
          {
            Put: {
              Item: { ...keys.card(boardId, card.id), type: 'card', ...card, colpos: columnPositionKey(column.id, card.position) },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          { Put: { Item: { ...keys.cardLookup(card.id), type: 'card_lookup', board_id: boardId } } },
          {
            Update: {
              Key: keys.columnLookup(column.id),
              UpdateExpression: 'SET card_version = :next',
              ConditionExpression: 'card_version = :seen',
              ExpressionAttributeValues: { ':seen': version, ':next': version + 1 },
            },
          },
          { ConditionCheck: { Key: keys.column(boardId, column.id), ConditionExpression: 'attribute_exists(pk)' } },
        ],
        board: notDeletingColumn(column.id),
        gone: () => new NotFound('Column'),
        boardRefused: () => new NotFound('Column'),
      });
      return shown;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[3] === 'ConditionalCheckFailed') throw new NotFound('Column');
      if (codes?.[2] === 'ConditionalCheckFailed') throw new LostRace();
      throw error;
    }
  });
}

/**
 * The board's part in a write to a card of `columnId`: the column must not have started its
 * deletion, whose collector, having listed the column's cards, would remove the card after the 200.
 */
const notDeletingColumn = (columnId: string): BoardItemChange => ({
  condition: 'NOT contains(deleting_columns, :column)',
  values: { ':column': columnId },
});

/**
 * Sets only the fields given with a non-null value; nothing given, or nothing different from the
 * card as stored, writes nothing (no `seq`, no event) and returns the card as it is. The board's
 * `seq` condition makes the card as read the card as it is when the write lands, so the answer
 * needs no read after the write; a change in between makes the attempt run again on the card as
 * it then is (the failed condition returns it).
 */
export async function updateCard(
  scope: BoardScope,
  changes: { title?: string | null; description?: string | null },
): Promise<Card> {
  let card = scope.card!;
  const state = { board: scope.board };
  const fields = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== null && value !== undefined));
  return retryLostRaces(async () => {
    const updated: CardRecord = { ...card, ...fields };
    if (Object.entries(fields).every(([name, value]) => (card as unknown as Record<string, unknown>)[name] === value)) {
      return toCard(card, state.board.labels);
    }
    const names = Object.keys(fields);
    const shown = toCard(updated, state.board.labels);
    try {
      await commitChange({
        boardId: scope.boardId,
        state,
        kind: 'card.updated',
        actor: actorOf(scope),
        fields: { card: shown },
        writes: [
          {
            Update: {
              Key: keys.card(scope.boardId, card.id),
              UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')}`,
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: Object.fromEntries(names.map((name) => [`#${name}`, name])),
              ExpressionAttributeValues: Object.fromEntries(names.map((name) => [`:${name}`, fields[name]])),
            },
          },
        ],
        board: notDeletingColumn(card.column_id),
        gone: () => new NotFound('Card'),
        boardRefused: () => new NotFound('Card'),
      });
      return shown;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') throw new NotFound('Card');
      if (error instanceof LostRace) card = await currentCard(scope.boardId, card.id);
      throw error;
    }
  });
}

/** A card as it is now (after a lost race): one strongly consistent read; gone is 404. */
async function currentCard(boardId: string, cardId: string): Promise<CardRecord> {
  const current = (await getItems([keys.card(boardId, cardId)])).get<CardRecord>(keys.card(boardId, cardId));
  if (!current) throw new NotFound('Card');
  return current;
}

/**
 * The card and its id lookup go together; a card already gone is 404. `card.deleted` names the
 * column the card leaves, so the delete requires the card to still be in the column it was read
 * in: a move committing between the access check's read and this write would otherwise make the
 * event name a column the card had already left. On that race the failed condition returns the
 * card as it now is and the delete goes again from there (one more round trip, only in that race).
 */
export async function deleteCard(scope: BoardScope): Promise<void> {
  let card = scope.card!;
  const state = { board: scope.board };
  await retryLostRaces(async () => {
    try {
      await commitChange({
        boardId: scope.boardId,
        state,
        kind: 'card.deleted',
        actor: actorOf(scope),
        fields: { card_id: card.id, column_id: card.column_id },
        writes: [
          {
            Delete: {
              Key: keys.card(scope.boardId, card.id),
              ConditionExpression: 'attribute_exists(pk) AND column_id = :column',
              ExpressionAttributeValues: { ':column': card.column_id },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          { Delete: { Key: keys.cardLookup(card.id) } },
        ],
        board: notDeletingColumn(card.column_id),
        gone: () => new NotFound('Card'),
        boardRefused: () => new NotFound('Card'),
      });
    } catch (error) {
      if (cancellationCodes(error)?.[0] !== 'ConditionalCheckFailed') throw error;
      const current = itemAtCancellation<CardRecord>(error, 0);
      if (!current) throw new NotFound('Card');
      card = current;
      throw new LostRace();
    }
  });
}

export interface MoveRequest {
  target_column_id: string;
  before_id?: string | null;
  after_id?: string | null;
}

/**
 * The spec's move, steps 2-6, on data the access check already fetched (lib/data/access.ts:
 * the target column and both neighbours came in the same two round trips as the card). The write
 * is one update of the card's column and position; the condition checks beside it only make sure
 * the target column and the board still exist when it lands.
 *
 * The answer is the card as read plus its new place, so the update also requires the title and
 * description to be unchanged since the read: an edit landing in between would otherwise be shown
 * reverted. It also requires the card to be where it was read, since `card.moved` names that place
 * as `from_column_id`/`from_position`: a move landing in between would make it false. If either
 * happened, the failed condition returns the card as it now is and the move is written again on
 * that (one more round trip, only in that race).
 *
 * A move to the place the card already has changes nothing, so it writes nothing: the update also
 * requires the column or the position to differ, as `updateExisting` does for edits, and a failure
 * of only that part answers the card as stored. No stream record, so no `card.moved`
 * (docs/realtime.md: a request that changes nothing emits nothing).
 */
export async function moveCard(scope: BoardScope, move: MoveRequest): Promise<Card> {
  const target = scope.relatedColumns.get(move.target_column_id);
  if (!target) throw new NotFound('Target column');
  if (target.boardId !== scope.boardId) throw new Forbidden('The target column is on another board.');
  const targetColumn = target.item;
  if (!targetColumn) throw new NotFound('Target column');

  const before = relatedOnBoard(scope.relatedCards, scope.boardId, move.before_id, 'The card named in before_id');
  const after = relatedOnBoard(scope.relatedCards, scope.boardId, move.after_id, 'The card named in after_id');
  const position = positionBetween(before?.position, after?.position);
  let card = scope.card!;

  const state = { board: scope.board };

  return retryLostRaces(async () => {
    const moved: CardRecord = { ...card, column_id: targetColumn.id, position };
    const shown = toCard(moved, state.board.labels);
    try {
      await commitChange({
        boardId: scope.boardId,
        state,
        kind: 'card.moved',
        actor: actorOf(scope),
        fields: { card: shown, from_column_id: card.column_id, from_position: card.position },
        writes: [
          {
            Update: {
              Key: keys.card(scope.boardId, card.id),
              UpdateExpression: 'SET column_id = :column, #position = :position, colpos = :colpos',
              ConditionExpression: `attribute_exists(pk) AND title = :title AND ${
                // A card stored without the attribute has no description, like one stored as null.
                card.description == null
                  ? '(attribute_not_exists(description) OR description = :description)'
                  : 'description = :description'
              } AND column_id = :fromColumn AND #position = :fromPosition AND (column_id <> :column OR #position <> :position)`,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              ExpressionAttributeNames: { '#position': 'position' },
              ExpressionAttributeValues: {
                ':column': moved.column_id,
                ':position': moved.position,
                ':colpos': columnPositionKey(moved.column_id, moved.position),
                ':title': card.title,
                ':description': card.description ?? null,
                // The event's from_* must be where this write found the card: a concurrent move in
                // between makes this one go again from where that one left it.
                ':fromColumn': card.column_id,
                ':fromPosition': card.position,
              },
            },
          },
          { ConditionCheck: { Key: keys.column(scope.boardId, moved.column_id), ConditionExpression: 'attribute_exists(pk)' } },
        ],
        // The card's own column (and the target) must not have started its deletion since the
        // access check, or the deletion, having already listed this card, would remove it after
        // this move's 200 (or leave it in a column that is gone).
        board: {
          condition: 'NOT contains(deleting_columns, :from) AND NOT contains(deleting_columns, :to)',
          values: { ':from': card.column_id, ':to': moved.column_id },
        },
        gone: () => new NotFound('Card'),
        boardRefused: (board) =>
          board.deleting_columns?.has(card.column_id) ? new NotFound('Card') : new NotFound('Target column'),
      });
      return shown;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[1] === 'ConditionalCheckFailed') throw new NotFound('Target column');
      if (codes?.[0] === 'ConditionalCheckFailed') {
        const current = itemAtCancellation<CardRecord>(error, 0);
        if (!current) throw new NotFound('Card');
        // Edited, or moved since it was read: written again on the card as it now is.
        const edited = current.title !== card.title || (current.description ?? null) !== (card.description ?? null);
        if (edited || current.column_id !== card.column_id || current.position !== card.position) {
          card = current;
          throw new LostRace();
        }
        // Title, description and place as read, so only the target can have failed: already there.
        if (current.column_id === moved.column_id && current.position === moved.position) {
          return toCard(current, state.board.labels);
        }
        // Unreachable while the condition reads as above; a 500 if it ever changes.
        throw error;
      }
      if (error instanceof LostRace) card = await currentCard(scope.boardId, card.id);
      throw error;
    }
  });
}
