import { randomUUID } from 'node:crypto';
import { newCardId } from '../domain/card-ids';
import { Archived, DomainError, Forbidden, LimitReached, NotFound } from '../domain/errors';
import { appendPosition, positionBetween } from '../domain/positions';
import { dynamoLimits } from '../runtime/aws-limits';
import { actorOf, cardAtEitherKey, type RelatedIds, resolveBoardScope, type ScopeVia } from './access';
import { queueEmpty, waitOrGone, withTurn } from './board-turns';
import { advancedCardVersion, cardAsRead, newCardWrites, ownLookupDelete, queryColumnCards } from './cards';
import { highestColumnPosition } from './columns';
import { type NamedItems, retryLostRaces, type TransactItem } from './db';
import { shownCard, versionOf } from './etags';
import { type BoardItemChange, type ChangeOfMany, ChangeRaceLost, changeRefusal, commitChanges, logRuns } from './event-log';
import { type FoldedCount, transactWriteCounted } from './rate-limits';
import { type BoardRecord, type Card, type CardRecord, type Column, type ColumnRecord, now, toColumn } from './records';
import { cardKeyOf, columnPositionKey, columnPositionPrefix, decodePosition, keys } from './table';

/**
 * POST /boards/{id}/batch: up to 25 changes of one board applied as their single routes would
 * apply them one after another, or not at all, in the access check's two round trips and one
 * transaction.
 *
 * 1. The access check's first round trip reads the lookups of every id the batch names (columns,
 *    cards, neighbours: `batchRelatedIds`); its second reads their items with the board and the
 *    membership, beside the highest card positions of every column a create names (`queryColumnTops`).
 * 2. The operations are simulated in order, in memory, on what was read: the same checks, in the
 *    same order, and the same positions (an append goes after the column as it stands after the
 *    batch's earlier operations), the same no-change rule (no event, no `seq`).
 * 3. The final state is one TransactWriteItems (`commitChanges`): each item written once with its
 *    final state (a card created, edited and moved is one Put), each conditioned on what was read,
 *    the board item's `seq` advanced by one per change, the events in as few log items as their
 *    size allows (`logRuns`: 25 creates with short texts share one).
 * A lost race (the board's `seq` moved, an item changed) reads everything again and simulates
 * again (retryLostRaces bounds it). The first operation that fails stops the batch with its own
 * problem and its index (`operation`): nothing was written.
 */

/** The batch's operations, as `batchBody` (lib/contract/schemas.ts) checked them. */
type BatchOperation =
  | { op: 'column.create'; title: string; ref?: string }
  | { op: 'card.create'; column_id?: string; column_ref?: string; title: string; description?: string | null; ref?: string }
  | { op: 'card.update'; card_id?: string; card_ref?: string; title?: string | null; description?: string | null }
  | {
      op: 'card.move';
      card_id?: string;
      card_ref?: string;
      target_column_id?: string;
      target_column_ref?: string;
      before_id?: string | null;
      before_ref?: string;
      after_id?: string | null;
      after_ref?: string;
    }
  | { op: 'card.delete'; card_id?: string; card_ref?: string };

export interface BatchRequest {
  operations: BatchOperation[];
}

/** Each operation's result: its single route's body (null for a delete). */
export type BatchResult = Column | Card | null;

/** Every id the batch names, read with the access check (its first round trip: their lookups). */
export function batchRelatedIds({ operations }: BatchRequest): RelatedIds {
  const columns: (string | undefined)[] = [];
  const cards: (string | null | undefined)[] = [];
  for (const operation of operations) {
    if (operation.op === 'card.create') columns.push(operation.column_id);
    if (operation.op === 'card.move') {
      columns.push(operation.target_column_id);
      cards.push(operation.before_id, operation.after_id);
    }
    if (operation.op !== 'column.create' && operation.op !== 'card.create') cards.push(operation.card_id);
  }
  return { columns, cards, archivedCards: true };
}

/** The highest cards of a column by position (id -> position); `complete`: all of its cards. */
interface ColumnTop {
  cards: Map<string, number>;
  complete: boolean;
}
export type ColumnTops = Map<string, ColumnTop>;

/**
 * The highest cards of each column a create names by id, queried beside the access check's
 * second round trip (after the column's lookup, with its card-create version, was read in the
 * first: lib/data/cards.ts says why that order makes appends safe). Each operation of the batch
 * takes at most one card out of a column (a move or a delete), so the highest 1 + that many are
 * enough to know the column's highest card after any of them: at least one of those stays.
 */
export async function queryColumnTops(boardId: string, { operations }: BatchRequest): Promise<ColumnTops> {
  const columnIds = new Set<string>();
  for (const operation of operations)
    if (operation.op === 'card.create' && operation.column_id) columnIds.add(operation.column_id);
  const limit = 1 + operations.filter((operation) => operation.op === 'card.move' || operation.op === 'card.delete').length;
  const tops = await Promise.all(
    [...columnIds].map(async (columnId): Promise<[string, ColumnTop]> => {
      const items = await queryColumnCards(boardId, columnId, { highestFirst: true, limit });
      const prefix = columnPositionPrefix(columnId);
      const cards = new Map(
        items.map((item) => [
          String(item.sk).slice(keys.cardPrefix.length),
          decodePosition(String(item.colpos).slice(prefix.length)),
        ]),
      );
      return [columnId, { cards, complete: items.length < limit }];
    }),
  );
  return new Map(tops);
}

const BATCH_RULE = { scope: 'board', via: 'board', role: 'member' } as const;

/**
 * Applies the batch (see above) and answers each operation's result. `count` is the rate
 * limiter's folded count (lib/http/rate-limit.ts `heldCount()`), carried by the batch's own
 * transaction.
 */
export async function applyBatch(
  scope: ScopeVia<'board'>,
  request: BatchRequest,
  tops: ColumnTops,
  count?: FoldedCount,
): Promise<BatchResult[]> {
  let read = { scope, tops };
  const pending = { count };
  // On a busy board the batch waits its turn like any change (lib/data/board-turns.ts): after a
  // lost race, or at once when writers already queue; holding it, nothing else commits meanwhile.
  let lastBoard = scope.board;
  return withTurn({ boardId: scope.boardId }, (untilTurn) =>
    retryLostRaces(async (attempt) => {
      const queued = attempt > 0 || !queueEmpty(scope.board);
      if (queued) await waitOrGone(untilTurn, lastBoard);
      // A lost race, or a wait: everything is read again, the membership included, as a new request would.
      if (queued) {
        const again = await resolveBoardScope(BATCH_RULE, actorOf(scope), scope.boardId, batchRelatedIds(request), (found) =>
          queryColumnTops(found.boardId, request),
        );
        read = { scope: again.scope as ScopeVia<'board'>, tops: again.preloaded! };
      }
      // Read after the board (its `seq` then covers every column created before the query), as
      // POST /boards/{id}/columns reads it: only a batch that creates a column pays this round trip.
      const hasColumnCreate = request.operations.some((operation) => operation.op === 'column.create');
      const [highestColumn, cardsMoved] = await Promise.all([
        hasColumnCreate ? highestColumnPosition(scope.boardId) : undefined,
        cardsMovedMeanwhile(read.scope),
      ]);
      const batch = new Simulation(read.scope, read.tops, highestColumn, cardsMoved);
      request.operations.forEach((operation, index) => {
        try {
          batch.apply(operation);
        } catch (error) {
          throw atOperation(error, index);
        }
        if (batch.itemCount() > dynamoLimits.transactItems) {
          throw atOperation(
            new LimitReached(
              `The operations up to this one need more than the ${dynamoLimits.transactItems} writes one transaction holds: send them in two batches.`,
            ),
            index,
          );
        }
      });
      try {
        await batch.commit(pending);
      } catch (error) {
        if (error instanceof ChangeRaceLost) lastBoard = error.board;
        throw error;
      }
      return batch.results;
    }),
  );
}

/** An operation's error, with its index added to the problem (`operation`). */
function atOperation(error: unknown, index: number): unknown {
  if (!(error instanceof DomainError)) return error;
  return new DomainError(error.kind, error.detail, { ...error.extra, operation: index });
}

/**
 * Cards whose lookup was read on this board but whose item was not where it was read: archived or
 * restored between the two round trips, or, for an id under the board's prefix (read at both
 * keys), between the reads of its two keys, or no card at all. Read at both keys again (one more
 * round trip, only then), as the access check of a card route does.
 */
async function cardsMovedMeanwhile(scope: ScopeVia<'board'>): Promise<Map<string, CardRecord>> {
  const missing = [...scope.relatedCards].filter(([, found]) => found.boardId === scope.boardId && !found.item);
  const found = await Promise.all(missing.map(([id]) => cardAtEitherKey(scope.boardId, id)));
  return new Map(found.filter((card): card is CardRecord => card !== undefined).map((card) => [card.id, card]));
}

/** A card as the batch leaves it: `read` as the table holds it (none: created by the batch). */
interface CardState {
  now: CardRecord;
  read?: CardRecord;
  gone: boolean;
}

/** A column the batch creates or appends to (`cardVersion`: its lookup's version as read). */
interface ColumnState {
  now: ColumnRecord;
  made: boolean;
  cardVersion: number;
  creates: number;
}

const archivedCard = () => new Archived('The card is archived: restore it (POST /cards/{id}/restore) before moving it.');

/** The operations applied in memory, in order, on what the access check read. */
class Simulation {
  readonly results: BatchResult[] = [];
  private readonly changes: ChangeOfMany[] = [];
  private readonly cards = new Map<string, CardState>();
  private readonly columns = new Map<string, ColumnState>();
  /** Existing columns a move puts a card in: each must still exist when the batch lands. */
  private readonly movedInto = new Set<string>();
  private readonly refs = new Map<string, string>();
  private readonly board: BoardRecord;
  private readonly tops: ColumnTops;

  constructor(
    private readonly scope: ScopeVia<'board'>,
    tops: ColumnTops,
    private highestColumn: number | undefined,
    private readonly cardsMoved: Map<string, CardRecord>,
  ) {
    this.board = scope.board;
    // Copies: a retry simulates again from what it read.
    this.tops = new Map([...tops].map(([id, top]) => [id, { cards: new Map(top.cards), complete: top.complete }]));
  }

  apply(operation: BatchOperation): void {
    if (operation.op === 'column.create') this.createColumn(operation);
    else if (operation.op === 'card.create') this.createCard(operation);
    else if (operation.op === 'card.update') this.updateCard(operation);
    else if (operation.op === 'card.move') this.moveCard(operation);
    else this.deleteCard(operation);
  }

  private createColumn(operation: Extract<BatchOperation, { op: 'column.create' }>) {
    const position = appendPosition(this.highestColumn);
    this.highestColumn = position;
    const column: ColumnRecord = {
      id: randomUUID(),
      board_id: this.scope.boardId,
      title: operation.title,
      position,
      created_at: now(),
    };
    this.columns.set(column.id, { now: column, made: true, cardVersion: 0, creates: 0 });
    this.tops.set(column.id, { cards: new Map(), complete: true });
    if (operation.ref !== undefined) this.refs.set(operation.ref, column.id);
    this.changed('column.created', { column: toColumn(column) }, toColumn(column));
  }

  private createCard(operation: Extract<BatchOperation, { op: 'card.create' }>) {
    const column = this.column(operation.column_id, operation.column_ref, 'Column');
    const top = this.tops.get(column.now.id);
    // Every column a create names by id was queried (queryColumnTops); one made here is empty.
    if (!top) throw new Error('a create into a column whose cards were not read');
    const card: CardRecord = {
      id: newCardId(this.scope.board.card_id_prefix),
      board_id: this.scope.boardId,
      column_id: column.now.id,
      title: operation.title,
      description: operation.description ?? null,
      position: appendPosition(highestOf(top)),
      created_at: now(),
    };
    top.cards.set(card.id, card.position);
    column.creates++;
    this.cards.set(card.id, { now: card, gone: false });
    if (operation.ref !== undefined) this.refs.set(operation.ref, card.id);
    const { card: shown } = shownCard(card, this.board);
    this.changed('card.created', { card: shown }, shown);
  }

  private updateCard(operation: Extract<BatchOperation, { op: 'card.update' }>) {
    const state = this.card(operation.card_id, operation.card_ref);
    const fields = Object.fromEntries(
      (['title', 'description'] as const)
        .map((name) => [name, operation[name]] as const)
        .filter(([, value]) => value !== null && value !== undefined),
    );
    const current = state.now as unknown as Record<string, unknown>;
    if (Object.entries(fields).every(([name, value]) => current[name] === value)) {
      this.results.push(shownCard(state.now, this.board).card);
      return;
    }
    state.now = { ...state.now, ...fields, version: versionOf(state.now) + 1 };
    const { card: shown } = shownCard(state.now, this.board);
    this.changed('card.updated', { card: shown }, shown);
  }

  private moveCard(operation: Extract<BatchOperation, { op: 'card.move' }>) {
    const state = this.card(operation.card_id, operation.card_ref);
    const target = this.column(operation.target_column_id, operation.target_column_ref, 'Target column');
    const before = this.neighbour(operation.before_id, operation.before_ref, 'The card named in before_id');
    const after = this.neighbour(operation.after_id, operation.after_ref, 'The card named in after_id');
    if (state.now.archived_at) throw archivedCard();
    const from = state.now;
    const position = positionBetween(before, after);
    // Already there: nothing to write, no event, as PATCH /cards/{id}/move.
    if (from.column_id === target.now.id && from.position === position) {
      this.results.push(shownCard(from, this.board).card);
      return;
    }
    this.tops.get(from.column_id)?.cards.delete(from.id);
    this.tops.get(target.now.id)?.cards.set(from.id, position);
    if (!target.made) this.movedInto.add(target.now.id);
    state.now = { ...from, column_id: target.now.id, position, version: versionOf(from) + 1 };
    const { card: shown } = shownCard(state.now, this.board);
    this.changed('card.moved', { card: shown, from_column_id: from.column_id, from_position: from.position }, shown);
  }

  private deleteCard(operation: Extract<BatchOperation, { op: 'card.delete' }>) {
    const state = this.card(operation.card_id, operation.card_ref);
    const card = state.now;
    this.tops.get(card.column_id)?.cards.delete(card.id);
    state.gone = true;
    this.changes.push({
      kind: 'card.deleted',
      fields: { card_id: card.id, column_id: card.column_id },
      // The collector removes the card's comments after the answer: only a card with some calls it.
      ...(card.comment_count ? { logAttributes: { comment_count: card.comment_count } } : {}),
    });
    this.results.push(null);
  }

  private changed(kind: ChangeOfMany['kind'], fields: Record<string, unknown>, result: BatchResult) {
    this.changes.push({ kind, fields });
    this.results.push(result);
  }

  /** A column named by id (this board's, found: else 404 or 403) or by the ref of one made earlier. */
  private column(id: string | undefined, ref: string | undefined, what: 'Column' | 'Target column'): ColumnState {
    const columnId = ref !== undefined ? this.refs.get(ref)! : id!;
    const known = this.columns.get(columnId);
    if (known) return known;
    const related = this.scope.relatedColumns.get(columnId);
    if (!related) throw new NotFound(what);
    if (related.boardId !== this.scope.boardId) {
      throw new Forbidden(what === 'Column' ? 'The column is on another board.' : 'The target column is on another board.');
    }
    // A column whose deletion has begun is gone for every route.
    if (!related.item || this.board.deleting_columns?.has(columnId)) throw new NotFound(what);
    const state = { now: related.item, made: false, cardVersion: related.cardVersion ?? 0, creates: 0 };
    this.columns.set(columnId, state);
    return state;
  }

  /** A card as it stands after the earlier operations, as a card route's access check finds it. */
  private cardAt(cardId: string, notFound: () => Error, otherBoard: () => Error): CardState {
    const known = this.cards.get(cardId);
    if (known) return known;
    const related = this.scope.relatedCards.get(cardId);
    if (!related) throw notFound();
    if (related.boardId !== this.scope.boardId) throw otherBoard();
    const item = related.item ?? this.cardsMoved.get(cardId);
    if (!item) throw notFound();
    const state = { now: item, read: item, gone: false };
    this.cards.set(cardId, state);
    return state;
  }

  /** The card an operation addresses: gone, or in a column being deleted, is 404. */
  private card(id: string | undefined, ref: string | undefined): CardState {
    const cardId = ref !== undefined ? this.refs.get(ref)! : id!;
    const notFound = () => new NotFound('Card');
    const state = this.cardAt(cardId, notFound, () => new Forbidden('The card is on another board.'));
    if (state.gone || this.board.deleting_columns?.has(state.now.column_id)) throw notFound();
    return state;
  }

  /** A move's neighbour's position: a card of this board in a column (archived or gone: 404). */
  private neighbour(id: string | null | undefined, ref: string | undefined, what: string): number | undefined {
    const cardId = ref !== undefined ? this.refs.get(ref)! : id;
    if (!cardId) return undefined;
    const notFound = () => new NotFound(what);
    const state = this.cardAt(cardId, notFound, () => new Forbidden(`${what} is on another board.`));
    if (state.gone || state.now.archived_at) throw notFound();
    return state.now.position;
  }

  /** What the transaction holds: the writes, the board item and the log items (`logRuns`). */
  itemCount(): number {
    return Object.keys(this.writes()).length + 1 + logRuns(this.changes).length;
  }

  /** Each item the batch changes, written once with its final state, conditioned on it as read. */
  private writes(): NamedItems {
    const boardId = this.scope.boardId;
    const writes: Record<string, TransactItem> = {};
    for (const [id, column] of this.columns) {
      if (column.made) {
        writes[`column:${id}`] = {
          Put: {
            Item: { ...keys.column(boardId, id), type: 'column', ...column.now },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        };
        writes[`columnLookup:${id}`] = {
          Put: { Item: { ...keys.columnLookup(id), type: 'column_lookup', board_id: boardId, card_version: column.creates } },
        };
      } else if (column.creates > 0) {
        // As createCard: serialises appends with the column's other creates. The lookup goes with
        // its column, so this also requires the column to still exist.
        writes[`columnLookup:${id}`] = { Update: advancedCardVersion(id, column.cardVersion, column.creates) };
      }
      if (!column.made && this.movedInto.has(id)) {
        writes[`columnCheck:${id}`] = {
          ConditionCheck: { Key: keys.column(boardId, id), ConditionExpression: 'attribute_exists(pk)' },
        };
      }
    }
    for (const [id, card] of this.cards) {
      const { now: final, read, gone } = card;
      if (!read) {
        if (gone) continue; // created and deleted by the batch: nothing to keep
        const made = newCardWrites(boardId, final);
        writes[`card:${id}`] = made.card;
        if (made.lookup) writes[`cardLookup:${id}`] = made.lookup;
        continue;
      }
      if (!gone && final === read) continue;
      // The card as read, as every single card write requires it.
      const asRead = cardAsRead(read);
      if (gone) {
        writes[`card:${id}`] = {
          Delete: {
            Key: cardKeyOf(boardId, read),
            ConditionExpression: asRead.condition,
            ExpressionAttributeNames: asRead.names,
            ExpressionAttributeValues: asRead.values,
          },
        };
        const lookupDelete = ownLookupDelete(id);
        if (lookupDelete) writes[`cardLookup:${id}`] = lookupDelete;
        continue;
      }
      const sets = ['#version = :nextVersion'];
      const values: Record<string, unknown> = { ...asRead.values, ':nextVersion': versionOf(final) };
      if (final.title !== read.title) {
        sets.push('title = :title');
        values[':title'] = final.title;
      }
      if ((final.description ?? null) !== (read.description ?? null)) {
        sets.push('description = :description');
        values[':description'] = final.description;
      }
      if (final.column_id !== read.column_id || final.position !== read.position) {
        sets.push('column_id = :column', '#position = :position', 'colpos = :colpos');
        Object.assign(values, {
          ':column': final.column_id,
          ':position': final.position,
          ':colpos': columnPositionKey(final.column_id, final.position),
        });
      }
      writes[`card:${id}`] = {
        Update: {
          Key: cardKeyOf(boardId, read),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: asRead.condition,
          ExpressionAttributeNames: asRead.names,
          ExpressionAttributeValues: values,
        },
      };
    }
    return writes;
  }

  /**
   * The board's part: no column the batch writes a card of (or into) may have started its
   * deletion, whose collector would otherwise remove the card after the answer (as the single
   * routes require).
   */
  private boardChange(): BoardItemChange | undefined {
    const guarded = new Set<string>();
    for (const column of this.columns.values()) if (!column.made && column.creates > 0) guarded.add(column.now.id);
    for (const { now: final, read, gone } of this.cards.values()) {
      if (!read || (!gone && final === read)) continue;
      guarded.add(read.column_id);
      if (!this.columns.get(final.column_id)?.made) guarded.add(final.column_id);
    }
    if (guarded.size === 0) return undefined;
    const names = [...guarded];
    return {
      condition: names.map((_, index) => `NOT contains(deleting_columns, :deleting${index})`).join(' AND '),
      values: Object.fromEntries(names.map((id, index) => [`:deleting${index}`, id])),
    };
  }

  /**
   * The one transaction. The rate limiter's count rides in it, unless the batch changes nothing
   * (it is then sent alone, as the request's only write) or the transaction is full (sent alone
   * first: one more round trip, only then). `pending.count` is cleared once it is counted.
   */
  async commit(pending: { count?: FoldedCount }): Promise<void> {
    if (this.changes.length === 0) {
      if (pending.count) await transactWriteCounted({}, pending.count);
      pending.count = undefined;
      return;
    }
    const writes = this.writes();
    if (pending.count && this.itemCount() + 1 > dynamoLimits.transactItems) {
      await transactWriteCounted({}, pending.count);
      pending.count = undefined;
    }
    try {
      await commitChanges({
        boardId: this.scope.boardId,
        seen: this.board,
        actor: actorOf(this.scope),
        changes: this.changes,
        writes,
        board: this.boardChange(),
        count: pending.count,
        boardRefused: (current) => new ChangeRaceLost(current),
      });
      pending.count = undefined;
    } catch (error) {
      // An item changed since it was read (a card edited, a column's version moved on, a column
      // deleted): everything is read again and simulated again.
      if (changeRefusal(error, writes)?.failed.size) throw new ChangeRaceLost(this.board);
      throw error;
    }
  }
}

/** The highest position among a column's cards as known (its highest ones, as the batch has left them). */
function highestOf(top: ColumnTop): number | undefined {
  if (top.cards.size === 0) {
    // The query's highest cards were more than the batch can have taken out (queryColumnTops).
    if (!top.complete) throw new Error('the highest cards of a column were all taken out');
    return undefined;
  }
  return Math.max(...top.cards.values());
}
