import { NotFound } from '../domain/errors';
import { appendPosition } from '../domain/positions';
import { actorOf, type BoardScope, type ScopeVia } from './access';
import { turnHeld, WRITE_ONLY } from './board-turns';
import {
  advancedCardVersion,
  appendedToColumn,
  cardAsRead,
  cardAtCancellation,
  columnEndAtTurn,
  highestCardPosition,
  lastAppendedTo,
  notDeletingColumn,
  type TaggedCard,
  versionMatches,
} from './cards';
import { getItems, type Item, type NamedItems, queryAll, type TransactItem } from './db';
import { type EntityTags, requireCardMatch, shownCard, versionOf } from './etags';
import { ChangeRaceLost, changeRefusal, commitChange, retryChange } from './event-log';
import { type BoardRecord, type Card, type CardRecord, type ColumnLookup, now, toCard } from './records';
import { columnPositionKey, keys } from './table';

/**
 * The archive. An archived card leaves its column: its item moves from `CARD#<id>` to
 * `ARCHIVED#<id>` (outside the tree's key range and the position index, so a tree or a column
 * reads nothing of it and a create never counts it). A route by card id reads it at both keys, or,
 * for a card with a lookup of its own (a version 4 id), at the one key that lookup's `archived`
 * names. Archiving and restoring are each one transaction: the item at one key deleted on the
 * condition that the card is as read, the item at the other put, the card's own lookup if it has
 * one, and the board's `seq` with the change's event (`card.archived`, `card.restored`).
 */

/** The attributes of a card item that are the card's own, without its keys and index attributes. */
function cardOf(item: CardRecord): CardRecord {
  const { pk: _pk, sk: _sk, type: _type, colpos: _colpos, ...card } = item as CardRecord & Record<string, unknown>;
  return card as CardRecord;
}

/**
 * A card's own lookup, which tells readers the key the card is at: kept with the card as it is
 * archived or restored. A card id under its board's prefix has none (its card is read at both keys).
 */
function ownLookupArchived(cardId: string, archived: boolean): TransactItem | undefined {
  const Key = keys.cardOwnLookup(cardId);
  if (!Key) return undefined;
  const ConditionExpression = 'attribute_exists(pk)';
  return archived
    ? {
        Update: {
          Key,
          UpdateExpression: 'SET archived = :true',
          ConditionExpression,
          ExpressionAttributeValues: { ':true': true },
        },
      }
    : { Update: { Key, UpdateExpression: 'REMOVE archived', ConditionExpression } };
}

/** Archives a card; an archived card changes nothing (the same `archived_at`, no event). */
export function archiveCard(scope: ScopeVia<'card'>, ifMatch?: EntityTags): Promise<TaggedCard> {
  const { boardId } = scope;
  return retryChange({ board: scope.board, item: scope.card, callsAfterTurn: WRITE_ONLY }, async ({ board, item: card }) => {
    requireCardMatch(ifMatch, card, board);
    if (card.archived_at) return shownCard(card, board);
    const archived: CardRecord = { ...cardOf(card), archived_at: now(), version: versionOf(card) + 1 };
    const shown = shownCard(archived, board);
    const asRead = cardAsRead(card);
    const writes = {
      card: {
        Delete: {
          Key: keys.card(boardId, card.id),
          ConditionExpression: asRead.condition,
          ExpressionAttributeNames: asRead.names,
          ExpressionAttributeValues: asRead.values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      archived: {
        Put: {
          Item: { ...keys.archivedCard(boardId, card.id), type: 'archived_card', ...archived },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      lookup: ownLookupArchived(card.id, true),
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'card.archived',
        actor: actorOf(scope),
        fields: { card: shown.card },
        writes,
        board: notDeletingColumn(card.column_id),
        gone: () => new NotFound('Card'),
        boardRefused: () => new NotFound('Card'),
      });
      return shown;
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      // Changed, moved, archived or deleted meanwhile: again on the card as it now is (gone: 404).
      if (refusal?.failed.has('card') || refusal?.failed.has('lookup')) {
        throw new ChangeRaceLost(refusal.board ?? board, await cardAtCancellation(refusal, boardId, card));
      }
      throw error;
    }
  });
}

/**
 * Restores an archived card to the end of its column (highest position + 1.0, or 1.0); a card
 * that is not archived changes nothing. It appends as a create does (lib/data/cards.ts
 * createCard), so a restore and a create never take the same place: without the board's turn it
 * reads the column's card-create version with the highest position and requires it unchanged;
 * holding the turn it reads only the column's end (or takes it from the board item) and advances
 * the version. A restore that lost the version waits its turn.
 */
export function restoreCard(scope: ScopeVia<'card'>, ifMatch?: EntityTags): Promise<TaggedCard> {
  const { boardId } = scope;
  // At its turn it reads its column's end unless the board's last change put a card there, and writes.
  const callsAfterTurn = (board: BoardRecord) => (lastAppendedTo(board, scope.card.column_id) === undefined ? 2 : 1);
  return retryChange({ board: scope.board, item: scope.card, callsAfterTurn }, async ({ board, item: card }) => {
    requireCardMatch(ifMatch, card, board);
    if (!card.archived_at) return shownCard(card, board);
    const columnId = card.column_id;
    const held = turnHeld() !== undefined;
    const [seenVersion, highest] = held
      ? [undefined, await columnEndAtTurn(board, boardId, columnId)]
      : await versionAndEnd(boardId, columnId);
    const { archived_at: _archivedAt, ...rest } = cardOf(card);
    const restored: CardRecord = { ...rest, position: appendPosition(highest), version: versionOf(card) + 1 };
    const shown = shownCard(restored, board);
    const version = versionMatches(card);
    const writes = {
      card: {
        Delete: {
          Key: keys.archivedCard(boardId, card.id),
          ConditionExpression: `attribute_exists(pk) AND ${version.condition}`,
          ExpressionAttributeNames: version.names,
          ExpressionAttributeValues: version.values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      restored: {
        Put: {
          Item: {
            ...keys.card(boardId, card.id),
            type: 'card',
            ...restored,
            colpos: columnPositionKey(columnId, restored.position),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      lookup: ownLookupArchived(card.id, false),
      cardVersion: { Update: advancedCardVersion(columnId, seenVersion) },
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'card.restored',
        actor: actorOf(scope),
        fields: { card: shown.card },
        writes,
        board: appendedToColumn(columnId, restored.position, board, held),
        gone: () => new NotFound('Card'),
        boardRefused: () => new NotFound('Card'),
      });
      return shown;
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (refusal?.failed.has('card') || refusal?.failed.has('lookup')) {
        throw new ChangeRaceLost(refusal.board ?? board, await cardAtCancellation(refusal, boardId, card));
      }
      if (refusal?.failed.has('cardVersion')) {
        // Its column is gone: so is the card, with the column's deletion.
        if (!refusal.itemAt<ColumnLookup>('cardVersion')) throw new NotFound('Card');
        // A create (or another restore) took the end of the column meanwhile: the column is busy.
        throw new ChangeRaceLost(refusal.board ?? board, undefined, true);
      }
      throw error;
    }
  });
}

/**
 * The column's card-create version and highest position, read beside each other (one round trip).
 * Both come after the board's read whose `seq` the restore's transaction requires, so a create
 * into the column that either misses fails that condition; the version's own check is what a
 * create relies on, kept here so that both append by one rule.
 */
async function versionAndEnd(boardId: string, columnId: string): Promise<[number, number | undefined]> {
  const [found, highest] = await Promise.all([getItems([keys.columnLookup(columnId)]), highestCardPosition(boardId, columnId)]);
  const column = found.get<ColumnLookup>(keys.columnLookup(columnId));
  // Its column is gone: so is the card, with the column's deletion.
  if (!column) throw new NotFound('Card');
  return [column.card_version, highest];
}

/** The board's archived cards, most recently archived first (ties: id): one strongly consistent query. */
export async function listArchivedCards(scope: BoardScope): Promise<Card[]> {
  const items = (await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.boardPartition(scope.boardId), ':prefix': keys.archivedCardPrefix },
  })) as Item[] as unknown as CardRecord[];
  return items
    .filter((card) => !scope.board.deleting_columns?.has(card.column_id))
    .sort(byArchivedNewestFirst)
    .map((card) => toCard(card, scope.board));
}

const byArchivedNewestFirst = (a: CardRecord, b: CardRecord) =>
  (a.archived_at ?? '') !== (b.archived_at ?? '')
    ? (a.archived_at ?? '') < (b.archived_at ?? '')
      ? 1
      : -1
    : a.id < b.id
      ? -1
      : 1;
