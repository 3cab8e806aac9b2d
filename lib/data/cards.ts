import type { InferOutput } from 'valibot';
import type { moveCardBody } from '../contract/schemas';
import { newCardId } from '../domain/card-ids';
import { Archived, Forbidden, NotFound } from '../domain/errors';
import { appendPosition, positionBetween } from '../domain/positions';
import { actorOf, cardAtEitherKey, relatedOnBoard, type ScopeVia } from './access';
import { dropPost, postsBehind, postsFailed, refusedPost, type TurnPost, turnHeld, WRITE_ONLY } from './board-turns';
import { nowSeconds } from './changes';
import { type Item, type NamedItems, queryPages, type Refusal, type TransactItem } from './db';
import { type EntityTags, requireCardMatch, shownCard, versionOf } from './etags';
import {
  type BoardItemChange,
  bothBoardChanges,
  type ChangeOfMany,
  ChangeRaceLost,
  type ChangeRefusal,
  changeRefusal,
  commitChange,
  commitChanges,
  retryChange,
  type Seen,
  seqOf,
} from './event-log';
import {
  type BoardRecord,
  type Card,
  type CardRecord,
  type ColumnLookup,
  type ColumnRecord,
  now,
  type PostedChange,
  type PostedCreate,
  type PostedUpdate,
} from './records';
import {
  COLUMN_POSITION_INDEX,
  cardKeyOf,
  columnPositionKey,
  columnPositionPrefix,
  decodePosition,
  type ItemKey,
  keys,
  TTL_ATTRIBUTE,
} from './table';

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
 * round trip, before the highest position is queried (beside the second), and a transaction made
 * without the board's turn commits only if it is unchanged, so two creates never derive their
 * positions from the same state (one made with the turn only advances it: nothing else commits
 * meanwhile). (The board's `seq`, read in the second round trip, may be newer than that query.) Moves
 * do not touch it (the spec lets a move write nothing but the card), and moves may produce equal
 * positions by the spec's own arithmetic anyway; creates alone are guaranteed distinct positions.
 * A create that lost the race, to another change of the board or only to its column's version,
 * waits its turn, then reads its column's highest card again (or takes it from the board item) and
 * writes. A lost version means another create committed between this one's two reads: the column
 * is busy, and racing again at once lost again about as often at the start of a burst, for two
 * calls of the write's budget each time (a query and a transaction).
 * While it waits, a create posts itself for the writer at the head, and holding the turn it
 * commits the creates posted right behind it into the same column with its own, at the positions
 * after its own (lib/data/board-turns.ts, "posted changes").
 */
export async function createCard(
  scope: ScopeVia<'column'>,
  input: { title: string; description?: string | null },
  highestAtFirstRead: number | undefined,
): Promise<TaggedCard> {
  const { boardId, column } = scope;
  // At its turn, a create reads its column's end unless the board's last change put a card there
  // (a busy column: likely again by then), and writes.
  const callsAfterTurn = (board: BoardRecord) => (lastAppendedTo(board, column.id) === undefined ? 2 : 1);
  // The card's id is fixed before the first attempt: a posted create is found by it.
  const cardId = newCardId(scope.board.card_id_prefix);
  const entry: PostedCreate = {
    kind: 'card.create',
    column_id: column.id,
    card_id: cardId,
    title: input.title,
    description: input.description ?? null,
    actor: actorOf(scope),
  };
  const post: TurnPost<TaggedCard> = {
    entry: () => (fitsInPost(entry) ? entry : undefined),
    probe: (ticket) => keys.turnDone(boardId, ticket),
    answer: answerFromDone,
  };
  const seen = { board: scope.board, item: scope.columnCardVersion, callsAfterTurn, post };
  let first = true;
  return retryChange(seen, async ({ board, item: seenVersion }) => {
    let highest = highestAtFirstRead;
    let version: number | undefined = seenVersion;
    // Holding the turn (even at the first attempt, when the request found writers queued and
    // waited before it), the column as first read is stale: what it read then would only fail.
    // Nothing else commits on the board while this writer holds it (lib/data/board-turns.ts), so
    // the column's end read now is the one the write meets, and the column's version is only
    // advanced, for the creates that read it.
    const held = turnHeld() !== undefined;
    if (held) {
      highest = await columnEndAtTurn(board, boardId, column.id);
      version = undefined;
    } else if (!first) {
      // Again without the turn: the board went away while this writer was to queue, and this
      // attempt meets that in its condition (404). Should it commit all the same, the version its
      // cancellation returned and the column's end read after it keep its position its own.
      highest = await highestCardPosition(boardId, column.id);
    }
    first = false;
    const card: CardRecord = {
      id: cardId,
      board_id: boardId,
      column_id: column.id,
      title: entry.title,
      description: entry.description,
      position: appendPosition(highest),
      created_at: now(),
    };
    const shown = shownCard(card, board);
    // Holding the turn, the creates into this column and the edits posted right behind it go with it.
    const taken = held
      ? takePosts(board, boardId, { columnId: column.id, position: card.position, cardIds: new Set([card.id]) })
      : NO_POSTS;
    const made = newCardWrites(boardId, card);
    const writes = {
      card: made.card,
      lookup: made.lookup,
      cardVersion: { Update: advancedCardVersion(column.id, version, 1 + taken.creates) },
      column: { ConditionCheck: { Key: keys.column(boardId, column.id), ConditionExpression: 'attribute_exists(pk)' } },
      ...taken.writes,
    } satisfies NamedItems;
    const appended = appendedToColumn(column.id, taken.lastPosition ?? card.position, board, held, 1 + taken.changes.length);
    const change = {
      boardId,
      seen: board,
      actor: entry.actor,
      writes,
      board: bothBoardChanges(appended, taken.board),
      gone: () => new NotFound('Column'),
    };
    try {
      if (taken.tickets.length === 0) {
        await commitChange({
          ...change,
          kind: 'card.created',
          fields: { card: shown.card },
          boardRefused: () => new NotFound('Column'),
        });
      } else {
        await commitChanges({
          ...change,
          changes: [{ kind: 'card.created', fields: { card: shown.card } }, ...taken.changes],
          combined: taken.tickets,
          boardRefused: (current) => refusedWithPosts(current, taken, { columnId: column.id, refused: new NotFound('Column') }),
        });
      }
      return shown;
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (refusal?.failed.has('column')) throw new NotFound('Column');
      if (refusal?.failed.has('cardVersion')) {
        const lookup = refusal.itemAt<ColumnLookup>('cardVersion');
        if (!lookup) throw new NotFound('Column');
        throw new ChangeRaceLost(refusal.board ?? board, lookup.card_version, true);
      }
      const failedPost = refusal && failedPostOf(refusal.failed, taken);
      if (failedPost !== undefined) {
        postsFailed(failedPost);
        throw new ChangeRaceLost(refusal?.board ?? board);
      }
      // The board's seq moved on, or writers queue: the create waits its turn (retryChange) and
      // writes as above.
      throw error;
    }
  });
}

/** What the writer at the head commits for the posts behind its own (postsBehind): their writes, events and board conditions. */
interface TakenPosts {
  tickets: number[];
  /** The column of each edit taken, by ticket: a column whose deletion began refuses it. */
  editColumns: Map<number, string>;
  writes: NamedItems;
  changes: ChangeOfMany[];
  board?: BoardItemChange;
  /** The creates among them (all into the head's own column), and the position of the last. */
  creates: number;
  lastPosition?: number;
}

const NO_POSTS: TakenPosts = { tickets: [], editColumns: new Map(), writes: {}, changes: [], creates: 0 };

/** The names of the posts' writes in the head's transaction: `post1Card`, `post1Lookup`, `post1Done`... */
const POST_WRITE = /^post(\d+)/;

/** The ticket of the first taken post whose own write failed in a cancelled transaction, if any. */
function failedPostOf(failed: ReadonlySet<string>, taken: TakenPosts): number | undefined {
  const indexes = [...failed].map((name) => POST_WRITE.exec(name)?.[1]).filter((index) => index !== undefined);
  if (indexes.length === 0) return undefined;
  return taken.tickets[Math.min(...indexes.map(Number)) - 1];
}

/** How long the item that tells a posted edit's writer it committed is kept (it reads it within seconds). */
const TURN_DONE_SECONDS = 60 * 60;

/**
 * The posts the writer at the head takes with its own change, and what it writes for them: a
 * create into its own column (`columnId`, its own card last at `position`) is appended after the
 * cards before it; an edit of a card nobody else in the transaction writes (`cardIds`) is the
 * write its writer would have made at its turn (its card required exactly as read, its version
 * advanced), with an item under its ticket that tells its writer it committed. Each has its event,
 * under its own writer's id, and an edit's column must not be being deleted.
 */
function takePosts(
  board: BoardRecord,
  boardId: string,
  own: { columnId?: string; position?: number; cardIds: Set<string> },
): TakenPosts {
  const cardIds = new Set(own.cardIds);
  const taken = postsBehind(board, (post) => {
    const id = post.kind === 'card.create' ? post.card_id : post.card.id;
    if (cardIds.has(id) || (post.kind === 'card.create' && post.column_id !== own.columnId)) return false;
    cardIds.add(id);
    return true;
  });
  if (taken.length === 0) return NO_POSTS;
  const result: TakenPosts = { tickets: [], editColumns: new Map(), writes: {}, changes: [], creates: 0 };
  const writes: Record<string, TransactItem> = {};
  const editColumns = new Set<string>();
  const createdAt = now();
  let position = own.position;
  taken.forEach(({ ticket, post }, index) => {
    const name = `post${index + 1}`;
    result.tickets.push(ticket);
    if (post.kind === 'card.create') {
      const card: CardRecord = {
        id: post.card_id,
        board_id: boardId,
        column_id: post.column_id,
        title: post.title,
        description: post.description,
        position: appendPosition(position),
        created_at: createdAt,
      };
      position = card.position;
      const made = newCardWrites(boardId, card);
      writes[`${name}Card`] = made.card;
      if (made.lookup) writes[`${name}Lookup`] = made.lookup;
      const shown = shownCard(card, board);
      writes[`${name}Done`] = doneWrite(boardId, ticket, shown);
      result.changes.push({ kind: 'card.created', fields: { card: shown.card }, actor: post.actor });
      result.creates++;
      result.lastPosition = card.position;
      return;
    }
    const next = { ...post.card, ...post.fields, version: versionOf(post.card) + 1 };
    writes[`${name}Card`] = {
      Update: cardUpdateOf(
        { pk: keys.boardPartition(boardId), sk: post.card_sk },
        post.card,
        setFields(post.fields),
        next.version,
      ),
    };
    const shown = shownCard(next, board);
    writes[`${name}Done`] = doneWrite(boardId, ticket, shown);
    result.changes.push({ kind: 'card.updated', fields: { card: shown.card }, actor: post.actor });
    result.editColumns.set(ticket, post.card.column_id);
    editColumns.add(post.card.column_id);
  });
  result.writes = writes;
  // One condition a column, whatever the number of edits in it: the condition's 4 KB.
  result.board = [...editColumns].reduce<BoardItemChange | undefined>(
    (all, columnId, index) =>
      bothBoardChanges(all, { condition: `NOT contains(deleting_columns, :pc${index})`, values: { [`:pc${index}`]: columnId } }),
    undefined,
  );
  return result;
}

/**
 * The board condition of a change that took posts failed, with its `seq` and its turn as read. Its
 * own column being deleted is its own refusal (`columnId`: answered as alone). Otherwise the first
 * post the board now refuses (its writer withdrew it, the column of its card began its deletion)
 * makes the change go again with only the posts before it; failing that, `otherwise` (its own
 * other conditions), or, with none, again without any post.
 */
function refusedWithPosts(
  current: BoardRecord,
  taken: TakenPosts,
  own: { columnId: string; refused: Error; otherwise?: () => Error },
): Error {
  if (current.deleting_columns?.has(own.columnId)) return own.refused;
  const columnGoing = taken.tickets.find((ticket) => {
    const columnId = taken.editColumns.get(ticket);
    return columnId !== undefined && current.deleting_columns?.has(columnId);
  });
  const failed = [refusedPost(current, taken.tickets), columnGoing].filter((ticket) => ticket !== undefined);
  if (failed.length === 0 && own.otherwise) return own.otherwise();
  postsFailed(failed.length > 0 ? Math.min(...failed) : (taken.tickets[0] ?? 0));
  return new ChangeRaceLost(current);
}

/**
 * The item that tells the writer of `ticket` the head committed its post, with the card as written
 * (its answer): written in the head's transaction, so it exists exactly when the post committed,
 * whatever happens to the card afterwards (an archive moves it, a deletion removes it).
 */
const doneWrite = (boardId: string, ticket: number, shown: TaggedCard): TransactItem => ({
  Put: {
    Item: {
      ...keys.turnDone(boardId, ticket),
      type: 'turn_done',
      card: shown.card,
      etag: shown.etag,
      [TTL_ATTRIBUTE]: nowSeconds() + TURN_DONE_SECONDS,
    },
  },
});

/**
 * A posted change's answer when the head committed it: the card and its tag as the head wrote them
 * (shown with the board as the head read it, as its event shows it), from the item that says so.
 */
const answerFromDone = (done: Item): TaggedCard => ({ card: done.card as Card, etag: done.etag as string });

/** A card as a posted edit carries it: its attributes, without the keys it is stored under. */
function postedCard(card: CardRecord): CardRecord {
  const { pk: _pk, sk: _sk, type: _type, colpos: _colpos, ...attributes } = card as CardRecord & Record<string, unknown>;
  return attributes as unknown as CardRecord;
}

/**
 * The most a create posted for the head may weigh, as JSON: the board item carries the posts
 * while their writers wait, and every read and write of the board item pays for its size then
 * (a read per 4 KB, a write per 1 KB). A longer create waits for its own turn.
 */
const MAX_POST_BYTES = 1024;

/**
 * The position of the last card of `columnId` when the board's latest change put it there (the
 * board item's `last_append`, at the board's current `seq`): undefined when anything has changed
 * on the board since, or that create went to another column.
 */
export function lastAppendedTo(board: BoardRecord, columnId: string): number | undefined {
  const last = board.last_append;
  return last && last.column_id === columnId && last.seq === seqOf(board) ? last.position : undefined;
}

/**
 * The column's end for a write that appends a card to it while holding the board's turn (a
 * create, a restore): where the board's last change put a card, when that was at this column's
 * end (no query), or the column's highest card as it now is.
 */
export async function columnEndAtTurn(board: BoardRecord, boardId: string, columnId: string): Promise<number | undefined> {
  return lastAppendedTo(board, columnId) ?? (await highestCardPosition(boardId, columnId));
}

/**
 * The column lookup's `card_version` advanced by the `count` cards a write appends to the column
 * (a create, a restore, a batch's creates): from `seen`, on the condition that it is still that (a
 * write that read the column's end without holding the board's turn), or from whatever it is (one
 * that holds the turn: nothing else changes it meanwhile), on the condition that the column still
 * exists. A failed condition hands back the lookup as it now is.
 */
export function advancedCardVersion(columnId: string, seen: number | undefined, count = 1) {
  const common = { Key: keys.columnLookup(columnId), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
  return seen === undefined
    ? {
        ...common,
        UpdateExpression: 'ADD card_version :count',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':count': count },
      }
    : {
        ...common,
        UpdateExpression: 'SET card_version = :next',
        ConditionExpression: 'card_version = :seen',
        ExpressionAttributeValues: { ':seen': seen, ':next': seen + count },
      };
}

/**
 * The board's part in a write that appends a card at `position` to `columnId`: the column not
 * being deleted, and, for a write that holds the board's turn, `last_append` left for the next
 * (its column's end is then known to be the one read after the board, which nothing changes until
 * the hand-over; a write without the turn read its column's end beside the board and may have
 * missed a move into the column that the `seq` it commits under already counts).
 */
export function appendedToColumn(
  columnId: string,
  position: number,
  board: BoardRecord,
  held: boolean,
  changes = 1,
): BoardItemChange {
  if (!held) return notDeletingColumn(columnId);
  return bothBoardChanges(notDeletingColumn(columnId), {
    set: ['last_append = :lastAppend'],
    values: { ':lastAppend': { column_id: columnId, position, seq: seqOf(board) + changes } },
  })!;
}

/**
 * The board's part in a write to a card of `columnId`: the column must not have started its
 * deletion, whose collector, having listed the column's cards, would remove the card after the 200.
 */
export const notDeletingColumn = (columnId: string): BoardItemChange => ({
  condition: 'NOT contains(deleting_columns, :column)',
  values: { ':column': columnId },
});

/**
 * The condition that a card is exactly as read, for the writes whose event carries the whole card:
 * when only the board's `seq` moved on meanwhile (another card, a column...), the attempt goes again
 * on the card as read, with the `seq` the failed condition returned, and reads nothing; when the
 * card itself changed, its failed condition returns it as it now is (ReturnValuesOnConditionCheckFailure).
 */
export function cardAsRead(card: CardRecord): {
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  const labels = card.label_ids && card.label_ids.size > 0 ? card.label_ids : undefined;
  const version = versionMatches(card);
  return {
    condition: [
      'attribute_exists(pk)',
      // The write counter too: an edit undone by another edit leaves the fields as read, not its tag.
      version.condition,
      'title = :readTitle',
      // A card stored without the attribute has no description, like one stored as null.
      card.description == null
        ? '(attribute_not_exists(description) OR description = :readDescription)'
        : 'description = :readDescription',
      'column_id = :readColumn',
      '#position = :readPosition',
      labels ? 'label_ids = :readLabels' : 'attribute_not_exists(label_ids)',
    ].join(' AND '),
    names: { '#position': 'position', ...version.names },
    values: {
      ...version.values,
      ':readTitle': card.title,
      ':readDescription': card.description ?? null,
      ':readColumn': card.column_id,
      ':readPosition': card.position,
      ...(labels ? { ':readLabels': labels } : {}),
    },
  };
}

/** The condition that a card's write counter is as read (a card never written since it came has none: 0). */
export function versionMatches(card: CardRecord): {
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  const version = versionOf(card);
  return {
    condition: version === 0 ? '(attribute_not_exists(#version) OR #version = :readVersion)' : '#version = :readVersion',
    names: { '#version': 'version' },
    values: { ':readVersion': version },
  };
}

/** A card as answered, with the entity tag its answer carries. */
export type TaggedCard = { card: Card; etag: string };

/**
 * Sets only the fields given with a non-null value; nothing given, or nothing different from the
 * card as stored, writes nothing (no `seq`, no event) and returns the card as it is. The board's
 * `seq` condition makes the card as read the card as it is when the write lands, so the answer
 * needs no read after the write; a change in between makes the attempt run again on the card as
 * it then is (the failed condition returns it).
 */
export async function updateCard(
  scope: ScopeVia<'card'>,
  changes: { title?: string | null; description?: string | null; due_at?: string | null },
  ifMatch?: EntityTags,
): Promise<TaggedCard> {
  const fields = Object.fromEntries(
    Object.entries(changes).filter((field): field is [string, string] => field[1] !== null && field[1] !== undefined),
  );
  const post: TurnPost<TaggedCard> = {
    entry: () => postedEdit(scope, fields, ifMatch),
    probe: (ticket) => keys.turnDone(scope.boardId, ticket),
    answer: answerFromDone,
  };
  return retryChange(
    { board: scope.board, item: scope.card, callsAfterTurn: WRITE_ONLY, post },
    async ({ board, item: card }) => {
      // On the card as this attempt writes it: a retry after a lost race checks the card as it now is.
      requireCardMatch(ifMatch, card, board);
      if (Object.entries(fields).every(([name, value]) => (card as unknown as Record<string, unknown>)[name] === value)) {
        return shownCard(card, board);
      }
      return commitCardUpdate(scope, { board, item: card }, { ...card, ...fields }, setFields(fields));
    },
  );
}

/**
 * An edit as its writer posts it while it queues (lib/data/board-turns.ts, "posted changes"), for
 * the writer at the head to commit with its own: the card as read and the fields it sets. Not
 * posted: an edit that changes nothing, or carries an `If-Match` (the tag also names the board's
 * labels as read, which the head's write does not require), or weighs more than MAX_POST_BYTES.
 * Its writer learns it committed from the item the head writes under its ticket, which holds the
 * card as written (the card as read with the fields set and its version advanced: the head's
 * write required the card exactly as read), and answers with it.
 */
function postedEdit(
  scope: ScopeVia<'card'>,
  fields: Record<string, string>,
  ifMatch: EntityTags | undefined,
): PostedUpdate | undefined {
  const { card, boardId } = scope;
  const record = card as unknown as Record<string, unknown>;
  if (ifMatch !== undefined && ifMatch !== '*') return undefined;
  if (Object.entries(fields).every(([name, value]) => record[name] === value)) return undefined;
  const entry: PostedUpdate = {
    kind: 'card.update',
    card_sk: cardKeyOf(boardId, card).sk,
    card: postedCard(card),
    fields,
    actor: actorOf(scope),
  };
  return fitsInPost(entry) ? entry : undefined;
}

/** Whether a change is small enough to post (MAX_POST_BYTES of JSON, a card's label id set as a list). */
const fitsInPost = (entry: PostedChange) =>
  Buffer.byteLength(JSON.stringify(entry, (_key, value: unknown) => (value instanceof Set ? [...value] : value))) <=
  MAX_POST_BYTES;

/** Clears a card's due date; a card without one changes nothing (no write, no event). */
export async function clearDueDate(scope: ScopeVia<'card'>, ifMatch?: EntityTags): Promise<TaggedCard> {
  return retryChange({ board: scope.board, item: scope.card, callsAfterTurn: WRITE_ONLY }, async ({ board, item: card }) => {
    requireCardMatch(ifMatch, card, board);
    if (!card.due_at) return shownCard(card, board);
    return commitCardUpdate(scope, { board, item: card }, { ...card, due_at: null }, { expression: 'REMOVE due_at' });
  });
}

/**
 * A change of a card that `card.updated` tells (its fields, its labels): one update of the card
 * as read, with the board's `seq` and the event of the card as written (`updated`). The card
 * changed meanwhile makes the attempt go again on the card as it now is (ChangeRaceLost, with the
 * card the failed condition returned); its column's deletion begun makes it 404.
 */
export async function commitCardUpdate(
  scope: ScopeVia<'card'>,
  { board, item: card }: Seen<CardRecord>,
  updated: CardRecord,
  update: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> },
  also?: { board: BoardItemChange; refused: () => Error },
): Promise<TaggedCard> {
  const next = { ...updated, version: versionOf(card) + 1 };
  const shown = shownCard(next, board);
  const writes = {
    card: { Update: cardUpdateOf(cardKeyOf(scope.boardId, card), card, update, next.version) },
  } satisfies NamedItems;
  // Holding the turn, the edits of other cards posted right behind it go with it.
  const taken = turnHeld() === undefined ? NO_POSTS : takePosts(board, scope.boardId, { cardIds: new Set([card.id]) });
  const change = {
    boardId: scope.boardId,
    seen: board,
    actor: actorOf(scope),
    writes: { ...writes, ...taken.writes },
    board: bothBoardChanges(bothBoardChanges(notDeletingColumn(card.column_id), also?.board), taken.board),
    gone: () => new NotFound('Card'),
  };
  const refused = (current: BoardRecord) =>
    also && !current.deleting_columns?.has(card.column_id) ? also.refused() : new NotFound('Card');
  try {
    if (taken.tickets.length === 0) {
      await commitChange({ ...change, kind: 'card.updated', fields: { card: shown.card }, boardRefused: refused });
    } else {
      await commitChanges({
        ...change,
        changes: [{ kind: 'card.updated', fields: { card: shown.card } }, ...taken.changes],
        combined: taken.tickets,
        boardRefused: (current) =>
          refusedWithPosts(current, taken, {
            columnId: card.column_id,
            refused: new NotFound('Card'),
            ...(also ? { otherwise: also.refused } : {}),
          }),
      });
    }
    return shown;
  } catch (error) {
    const refusal = changeRefusal(error, change.writes);
    const failedPost = refusal && failedPostOf(refusal.failed, taken);
    if (failedPost !== undefined) postsFailed(failedPost);
    if (refusal?.failed.has('card')) {
      // An edit posted from the card as first read would only fail in the head's transaction.
      dropPost();
      throw new ChangeRaceLost(refusal.board ?? board, await cardAtCancellation(refusal, scope.boardId, card));
    }
    if (failedPost !== undefined) throw new ChangeRaceLost(refusal?.board ?? board);
    throw error;
  }
}

/**
 * The write of a card's update: `update` on the card at `key`, on the condition that it is exactly
 * as read (`card`), its version advanced to `nextVersion`; a failed condition hands back the card
 * as it now is. The head writes a posted edit exactly as its writer would have.
 */
function cardUpdateOf(
  key: ItemKey,
  card: CardRecord,
  update: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> },
  nextVersion: number,
) {
  const asRead = cardAsRead(card);
  return {
    Key: key,
    UpdateExpression: withNextVersion(update.expression),
    ConditionExpression: asRead.condition,
    ExpressionAttributeNames: { ...asRead.names, ...update.names },
    ExpressionAttributeValues: { ...asRead.values, ...update.values, ':nextVersion': nextVersion },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/** `SET` of the fields an edit gives, as an update of `cardUpdateOf`. */
function setFields(fields: Record<string, unknown>) {
  const names = Object.keys(fields);
  return {
    expression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')}`,
    names: Object.fromEntries(names.map((name) => [`#${name}`, name])),
    values: Object.fromEntries(names.map((name) => [`:${name}`, fields[name]])),
  };
}

/**
 * A new card's writes: the card, required not to exist yet, at its key with its position-index key,
 * and, for an id not under its board's prefix, its own id lookup.
 */
export function newCardWrites(boardId: string, card: CardRecord) {
  const ownLookup = keys.cardOwnLookup(card.id);
  return {
    card: {
      Put: {
        Item: { ...keys.card(boardId, card.id), type: 'card', ...card, colpos: columnPositionKey(card.column_id, card.position) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    // A card id under its board's prefix reaches the board through the board's one item.
    lookup: ownLookup ? { Put: { Item: { ...ownLookup, type: 'card_lookup', board_id: boardId } } } : undefined,
  } satisfies NamedItems;
}

/** The deletion of a card's own lookup, with the card's; none for an id under its board's prefix. */
export function ownLookupDelete(cardId: string) {
  const lookup = keys.cardOwnLookup(cardId);
  return lookup ? { Delete: { Key: lookup } } : undefined;
}

/** An update expression that also advances the card's write counter (its condition required it as read). */
const withNextVersion = (expression: string) =>
  expression.startsWith('SET ')
    ? `SET #version = :nextVersion, ${expression.slice(4)}`
    : `SET #version = :nextVersion ${expression}`;

/** Whether two reads of a card are the same write of it (what its events and its tag carry). */
function sameCard(a: CardRecord, b: CardRecord): boolean {
  const labels = (card: CardRecord) => [...(card.label_ids ?? [])].sort().join();
  return (
    versionOf(a) === versionOf(b) &&
    a.title === b.title &&
    (a.description ?? null) === (b.description ?? null) &&
    a.column_id === b.column_id &&
    a.position === b.position &&
    labels(a) === labels(b)
  );
}

/**
 * The card as it now is, from its write's failed condition (ALL_OLD) in a cancelled transaction.
 * A card no longer at the key the write named was archived or restored meanwhile, or deleted: it
 * is read at both keys (one more round trip, only in that race); gone from both is 404.
 */
export async function cardAtCancellation<N extends string>(
  refusal: Refusal<N | 'card'>,
  boardId: string,
  written: CardRecord,
): Promise<CardRecord> {
  const current = refusal.itemAt<CardRecord>('card') ?? (await cardAtEitherKey(boardId, written.id));
  if (!current) throw new NotFound('Card');
  return current;
}

/**
 * The card and its own id lookup, if it has one, go together; a card already gone is 404.
 * `card.deleted` names the column the card leaves, so the delete requires the card to still be in
 * the column it was read in: a move committing between the access check's read and this write would otherwise make the
 * event name a column the card had already left. On that race the failed condition returns the
 * card as it now is and the delete goes again from there (one more round trip, only in that race).
 */
export async function deleteCard(scope: ScopeVia<'card'>, ifMatch?: EntityTags): Promise<void> {
  await retryChange({ board: scope.board, item: scope.card, callsAfterTurn: WRITE_ONLY }, async ({ board, item: card }) => {
    requireCardMatch(ifMatch, card, board);
    // The card must still be the write it was read as: the tags listed name it, and the log item
    // tells the collector how many comments to remove (every comment write advances the counter).
    const version = versionMatches(card);
    const writes = {
      card: {
        Delete: {
          Key: cardKeyOf(scope.boardId, card),
          ConditionExpression: `attribute_exists(pk) AND column_id = :column AND ${version.condition}`,
          ExpressionAttributeNames: version.names,
          ExpressionAttributeValues: { ':column': card.column_id, ...version.values },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      lookup: ownLookupDelete(card.id),
    } satisfies NamedItems;
    try {
      await commitChange({
        boardId: scope.boardId,
        seen: board,
        kind: 'card.deleted',
        actor: actorOf(scope),
        fields: { card_id: card.id, column_id: card.column_id },
        // The collector removes the card's comments after the answer: only a card with some calls it.
        ...(card.comment_count ? { logAttributes: { comment_count: card.comment_count } } : {}),
        writes,
        board: notDeletingColumn(card.column_id),
        gone: () => new NotFound('Card'),
        boardRefused: () => new NotFound('Card'),
      });
    } catch (error) {
      const refusal = changeRefusal(error, writes);
      if (!refusal?.failed.has('card')) throw error;
      throw new ChangeRaceLost(refusal.board ?? board, await cardAtCancellation(refusal, scope.boardId, card));
    }
  });
}

/** A move of an archived card: it has no place among the column's cards until it is restored. */
const archivedCard = () => new Archived('The card is archived: restore it (POST /cards/{id}/restore) before moving it.');

/** A move as the route's body schema parses it: the schema is the one statement of its fields. */
type MoveRequest = InferOutput<ReturnType<typeof moveCardBody>>;

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
 * requires the column or the position to differ, and a failure of only that part answers the card
 * as stored. No stream record, so no `card.moved`
 * (docs/realtime.md: a request that changes nothing emits nothing).
 */
export async function moveCard(scope: ScopeVia<'card'>, move: MoveRequest, ifMatch?: EntityTags): Promise<TaggedCard> {
  const targetColumn = moveTargetColumn(scope, move);
  const position = movePosition(scope, move);
  return retryChange({ board: scope.board, item: scope.card, callsAfterTurn: WRITE_ONLY }, async ({ board, item: card }) => {
    // An archived card is in no column; on a retry, one archived since the move was asked.
    if (card.archived_at) throw archivedCard();
    requireCardMatch(ifMatch, card, board);
    const moved: CardRecord = { ...card, column_id: targetColumn.id, position, version: versionOf(card) + 1 };
    const shown = shownCard(moved, board);
    const writes = moveWrites(scope.boardId, card, moved);
    try {
      await commitChange({
        boardId: scope.boardId,
        seen: board,
        kind: 'card.moved',
        actor: actorOf(scope),
        fields: { card: shown.card, from_column_id: card.column_id, from_position: card.position },
        writes,
        // The card's own column (and the target) must not have started its deletion since the
        // access check, or the deletion, having already listed this card, would remove it after
        // this move's 200 (or leave it in a column that is gone).
        board: {
          condition: 'NOT contains(deleting_columns, :from) AND NOT contains(deleting_columns, :to)',
          values: { ':from': card.column_id, ':to': moved.column_id },
        },
        gone: () => new NotFound('Card'),
        boardRefused: (current) =>
          current.deleting_columns?.has(card.column_id) ? new NotFound('Card') : new NotFound('Target column'),
      });
      return shown;
    } catch (error) {
      return cardAfterRefusedMove(error, changeRefusal(error, writes), { board, item: card }, moved, scope.boardId);
    }
  });
}

/** The target column, from the access check's related columns: 404 when missing, 403 on another board. */
function moveTargetColumn(scope: ScopeVia<'card'>, move: MoveRequest): ColumnRecord {
  const target = scope.relatedColumns.get(move.target_column_id);
  if (!target) throw new NotFound('Target column');
  if (target.boardId !== scope.boardId) throw new Forbidden('The target column is on another board.');
  if (!target.item) throw new NotFound('Target column');
  return target.item;
}

/** The new position, between the cards named in before_id and after_id (each an item of this board, or 404). */
function movePosition(scope: ScopeVia<'card'>, move: MoveRequest): number {
  const before = relatedOnBoard(scope.relatedCards, scope.boardId, move.before_id, 'The card named in before_id');
  const after = relatedOnBoard(scope.relatedCards, scope.boardId, move.after_id, 'The card named in after_id');
  return positionBetween(before?.position, after?.position);
}

/** The move's writes: the card's update, conditioned on the card as read, and the target column's check. */
function moveWrites(boardId: string, card: CardRecord, moved: CardRecord) {
  const asRead = cardAsRead(card);
  return {
    card: {
      Update: {
        Key: keys.card(boardId, card.id),
        UpdateExpression: 'SET column_id = :column, #position = :position, colpos = :colpos, #version = :nextVersion',
        // The card as read (the event's from_* must be where this write found it, and its
        // card the card as written), and somewhere else than it is.
        ConditionExpression: `${asRead.condition} AND (column_id <> :column OR #position <> :position)`,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ExpressionAttributeNames: asRead.names,
        ExpressionAttributeValues: {
          ...asRead.values,
          ':column': moved.column_id,
          ':position': moved.position,
          ':colpos': columnPositionKey(moved.column_id, moved.position),
          ':nextVersion': moved.version,
        },
      },
    },
    targetColumn: {
      ConditionCheck: { Key: keys.column(boardId, moved.column_id), ConditionExpression: 'attribute_exists(pk)' },
    },
  } satisfies NamedItems;
}

/**
 * A move whose transaction was cancelled: the card as it now is when it is already where it is
 * asked to go (nothing to write), else the error that says why, or ChangeRaceLost to write the
 * move again on the card as it now is.
 */
async function cardAfterRefusedMove(
  error: unknown,
  refusal: ChangeRefusal<'card' | 'targetColumn'> | undefined,
  { board, item: card }: Seen<CardRecord>,
  moved: CardRecord,
  boardId: string,
): Promise<TaggedCard> {
  if (refusal?.failed.has('targetColumn')) throw new NotFound('Target column');
  if (!refusal?.failed.has('card')) throw error;
  const current = await cardAtCancellation(refusal, boardId, card);
  // The board as it now is when its condition failed too, else as read.
  const now = refusal.board ?? board;
  // Its column's deletion began meanwhile (the board's condition failed too, and returned
  // the board as it now is): the card is about to go.
  if (now.deleting_columns?.has(current.column_id)) throw new NotFound('Card');
  // Already where it is asked to go, and as read otherwise: nothing to write.
  if (current.column_id === moved.column_id && current.position === moved.position && sameCard(current, card)) {
    return shownCard(current, now);
  }
  // As read, yet its condition failed: unreachable while the condition reads as above (a 500
  // if it ever changes, rather than a loop of retries).
  if (sameCard(current, card)) throw error;
  // Edited, moved or relabelled since it was read: written again on the card as it now is.
  throw new ChangeRaceLost(now, current);
}
