import { randomUUID } from 'node:crypto';
import { cardIdPrefixOf, cardIdSpace, newCardIdPrefix } from '../domain/card-ids';
import { byLabelName, byNewestFirst, byPosition } from '../domain/ordering';
import { actorOf, type BoardScope } from './access';
import { WRITE_ONLY } from './board-turns';
import { deleteItems, getItems, type Item, type NamedItems, namesOf, queryAll, queryPages, refusalOf } from './db';
import { commitChange, retryChange, seqOf } from './event-log';
import { type FoldedCount, transactWriteCounted } from './rate-limits';
import {
  type Board,
  type BoardRecord,
  type BoardTree,
  type Card,
  type CardRecord,
  type ColumnRecord,
  isLiveLabel,
  type LabelRecord,
  type MemberRecord,
  now,
  toBoard,
  toCard,
  toColumn,
  toLabel,
} from './records';
import { cancellationCodes } from './sdk-errors';
import { type ItemKey, keys } from './table';
import { accountGone } from './users';

/**
 * One TransactWriteItems: the board, the owner's membership and its mirror under the user, and
 * the board's card-id prefix item. With a `count` (the rate limiter's, lib/data/rate-limits.ts),
 * the counter's conditional increment is one more item of it: no round trip before the create,
 * and a refused request writes nothing. A prefix another board holds (one chance in 2^60 per
 * board) fails its condition, and the create goes again with another.
 */
export async function createBoard(ownerId: string, title: string, count?: FoldedCount): Promise<Board> {
  for (let attempt = 1; ; attempt++) {
    const board: BoardRecord = {
      id: randomUUID(),
      owner_id: ownerId,
      title,
      created_at: now(),
      owner_count: 1,
      labels: {},
      members: { [ownerId]: 0 },
      card_id_prefix: newCardIdPrefix(),
    };
    const member: MemberRecord = { board_id: board.id, user_id: ownerId, role: 'owner', joined_at: board.created_at };
    const items = {
      board: {
        Put: { Item: { ...keys.board(board.id), type: 'board', ...board }, ConditionExpression: 'attribute_not_exists(pk)' },
      },
      cardIds: {
        Put: {
          Item: { ...keys.cardIds(board.card_id_prefix!), type: 'card_ids', board_id: board.id },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      member: { Put: { Item: { ...keys.member(board.id, ownerId), type: 'member', ...member } } },
      userBoard: { Put: { Item: { ...keys.userBoard(ownerId, board.id), type: 'user_board', ...member } } },
      // A deleted account's token creates nothing (its profile went in the deletion's transaction).
      profile: { ConditionCheck: { Key: keys.userProfile(ownerId), ConditionExpression: 'attribute_exists(pk)' } },
    } satisfies NamedItems;
    try {
      // The counter goes after these items (transactWriteCounted), so they are read by their names.
      await transactWriteCounted(items, count);
      return toBoard(board);
    } catch (error) {
      const failed = refusalOf(error, namesOf(items))?.failed;
      if (failed?.has('profile')) throw accountGone();
      if (failed?.has('cardIds') && attempt < PREFIX_ATTEMPTS) continue;
      throw error;
    }
  }
}

/** Tries at a card-id prefix nobody holds: a second is already one chance in 2^120. */
const PREFIX_ATTEMPTS = 3;

/** Query of the user's memberships, then one BatchGetItem of those boards (100 keys a chunk, in parallel). */
export async function listBoards(userId: string): Promise<Board[]> {
  const memberships = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':prefix': keys.userBoardPrefix },
    ProjectionExpression: 'board_id',
  });
  const boardKeys = memberships.map((m) => keys.board(m.board_id as string));
  const found = await getItems([...boardKeys, keys.userProfile(userId)]);
  // A deleted account's memberships last until the account collector has run; it sees none.
  if (!found.get(keys.userProfile(userId))) return [];
  return boardKeys
    .map((key) => found.get<BoardRecord>(key))
    .filter((board): board is BoardRecord => board !== undefined)
    .map(toBoard)
    .sort(byNewestFirst);
}

/** A rename to the title it already has writes nothing (no `seq`, no event). */
export async function renameBoard(scope: BoardScope, title: string): Promise<Board> {
  return retryChange({ board: scope.board, item: undefined, callsAfterTurn: WRITE_ONLY }, async ({ board }) => {
    if (board.title === title) return toBoard(board);
    const renamed = toBoard({ ...board, title });
    await commitChange({
      boardId: scope.boardId,
      seen: board,
      kind: 'board.updated',
      actor: actorOf(scope),
      fields: { board: renamed },
      writes: {},
      board: { set: ['title = :title'], values: { ':title': title } },
    });
    return renamed;
  });
}

/** A board's cards, columns and labels are one range of its partition: CARD# < COLUMN# < LABEL#. */
const TREE_RANGE_END = `${keys.labelPrefix}\uffff`;

const MAX_PARALLEL_RANGES = 16;
/**
 * Ranges sized to exactly the first page's share would each need a second page whenever the ids
 * fall a few per cent unevenly (measured: 12 pages instead of 8 in 2 of 5 runs of a 5,000-card
 * board). 15 % more, smaller ranges keep each to one page in all but ~0.5 % of reads (simulated over
 * random ids) for one more page in all; read units follow bytes, so they do not change.
 */
const RANGE_MARGIN = 1.15;

/**
 * The ranges still to read after a first page that ended at `lastSk`, sized from that page.
 * A board's card ids are random after its prefix, so the share of their space
 * (lib/domain/card-ids.ts, `cardIdSpace`) the first page covered tells about how many more pages
 * the board holds; the rest of the space is split into that many ranges and 15 % more (at most
 * 16), so that the board is still read at about one page per MB, but in parallel, one page per
 * range. The range holding `lastSk` resumes after it; the last one also takes the columns (and
 * any card id that sorts after the space).
 */
export function treeRangesAfter(lastSk: string): { from: string; to: string; resume: boolean }[] {
  const columns = { from: keys.columnPrefix, to: TREE_RANGE_END };
  if (!lastSk.startsWith(keys.cardPrefix)) return [{ ...columns, resume: true }];
  const lastId = lastSk.slice(keys.cardPrefix.length);
  const space = cardIdSpace(cardIdPrefixOf(lastId));
  const at = space.positionOf(lastId);
  const covered = (at + 1) / space.size;
  const count = Math.max(1, Math.min(MAX_PARALLEL_RANGES, Math.ceil((RANGE_MARGIN * (1 - covered)) / covered), space.size - at));
  const bounds = Array.from({ length: count + 1 }, (_, i) => Math.round(at + ((space.size - at) * i) / count));
  // The last range runs on through the columns and labels (a few small items) rather than costing a page.
  return bounds.slice(0, -1).map((low, i) => ({
    from: `${keys.cardPrefix}${space.idStartAt(low)}`,
    to: i === count - 1 ? columns.to : `${keys.cardPrefix}${space.idStartAt(bounds[i + 1]! - 1)}\uffff`,
    resume: i === 0,
  }));
}

/**
 * The board tree from strongly consistent queries of the board's partition, assembled in memory;
 * only columns and cards are read (the board item came with the access check). A board that fits
 * in one page (1 MB) costs one query. A bigger one has the rest of its range read as parallel
 * ranges sized from the first page (treeRangesAfter): the same read units and about one page per
 * MB, but about three round trips one after another instead of one per MB.
 */
export async function readBoardTree(scope: BoardScope, filters: TreeFilters = {}): Promise<BoardTree> {
  const columns: ColumnRecord[] = [];
  const cards: CardRecord[] = [];
  const labels: LabelRecord[] = [];
  const collect = (items: Item[]) => {
    for (const item of items) {
      if (item.sk.startsWith(keys.columnPrefix)) columns.push(item as unknown as ColumnRecord);
      else if (item.sk.startsWith(keys.cardPrefix)) cards.push(item as unknown as CardRecord);
      else if (item.sk.startsWith(keys.labelPrefix)) labels.push(item as unknown as LabelRecord);
    }
    return undefined;
  };
  const pk = keys.boardPartition(scope.boardId);
  const range = (from: string, to: string) => ({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
  });
  const first = await queryPages(range(keys.cardPrefix, TREE_RANGE_END), (items) => {
    collect(items);
    return false;
  });
  if (first.lastKey) {
    const lastSk = first.lastKey.sk as string;
    await Promise.all(
      treeRangesAfter(lastSk).map(({ from, to, resume }) =>
        queryPages(range(from, to), collect, resume ? first.lastKey : undefined),
      ),
    );
  }
  const cardsByColumn = new Map<string, CardRecord[]>(columns.map((c) => [c.id, []]));
  for (const card of cards) cardsByColumn.get(card.column_id)?.push(card);
  const shows = treeFilter(filters);
  // The board item was read before the range: a label deleted in between is in its map but has no
  // item any more. Only labels both name and show count, so a card never shows one the tree lacks.
  const shown = labels.filter((label) => isLiveLabel(scope.board.labels, label.id));
  const live = Object.fromEntries(shown.map((label) => [label.id, label.name]));
  return {
    ...toBoard(scope.board),
    // The board item was read before the range: every change up to its seq is in the tree.
    seq: seqOf(scope.board),
    columns: columns.sort(byPosition).map((column) => ({
      ...toColumn(column),
      cards: (cardsByColumn.get(column.id) ?? [])
        .sort(byPosition)
        .map((card) => toCard(card, { labels: live, members: scope.board.members }))
        .filter(shows),
    })),
    labels: shown.sort(byLabelName).map(toLabel),
  };
}

/** The tree's filters (GET /boards/{id}), each optional; a card is listed when it matches them all. */
export interface TreeFilters {
  label_id?: string;
  assignee_id?: string;
  due_before?: string;
  q?: string;
}

/**
 * Whether a card as shown matches the filters. They apply to the card as answered (live labels and
 * assignees only), in memory, after the one read the tree makes anyway: a filtered tree costs the
 * round trips and read units of the whole tree, and no index has to be kept for it.
 */
function treeFilter(filters: TreeFilters): (card: Card) => boolean {
  const text = filters.q?.toLowerCase();
  return (card) =>
    (filters.label_id === undefined || card.label_ids.includes(filters.label_id)) &&
    (filters.assignee_id === undefined || card.assignee_ids.includes(filters.assignee_id)) &&
    // Both are ISO 8601 UTC with milliseconds and `Z`: their text order is their time order.
    (filters.due_before === undefined || (card.due_at !== null && card.due_at < filters.due_before)) &&
    (text === undefined || card.title.toLowerCase().includes(text) || (card.description ?? '').toLowerCase().includes(text));
}

/** The filters as one canonical text (empty for none): what the tree's entity tag names besides the board. */
export const treeViewOf = (filters: TreeFilters) =>
  (['label_id', 'assignee_id', 'due_before', 'q'] as const)
    .filter((name) => filters[name] !== undefined)
    .map((name) => `${name}=${encodeURIComponent(filters[name]!)}`)
    .join('&');

/**
 * Deletes the board item, in one conditional write with its card-id prefix item and the
 * `board.deleted` event item: from that
 * moment every route answers as if the whole board were gone (lib/data/access.ts checks the board
 * item on every path), and writes into the board fail their condition check. The memberships go
 * next, still in the request, so that the former members are non-members at once (403, the
 * contract's answer after a deletion). Everything else is removed after the answer by the
 * collector (functions/children/collect.ts), fed by the event item through the table's stream, so
 * a board of any size is deleted without the request's 30 seconds being the limit.
 */
export async function deleteBoard(scope: BoardScope): Promise<void> {
  await deleteBoardAs(scope.boardId, actorOf(scope), scope.board);
}

/**
 * The deletion itself, by `actor`, as the board's last change: its `seq` condition makes every
 * change that committed before it lower-numbered, and every later one fail (the board is gone),
 * so `board.deleted` is the last event of the board. `soleOwner`: only while that user is still
 * the board's one owner (an account deletion, lib/data/accounts.ts), checked in the same
 * transaction; a board that no longer fits is LostRace, for the caller to look again.
 */
export async function deleteBoardAs(boardId: string, actor: string, read: BoardRecord, soleOwner?: string): Promise<void> {
  await retryChange({ board: read, item: undefined, callsAfterTurn: WRITE_ONLY }, async ({ board }) => {
    try {
      await commitChange({
        boardId,
        seen: board,
        kind: 'board.deleted',
        actor,
        deletesBoard: true,
        writes: {
          // Its cards' ids lead nowhere from here on; the collector never sees this item (not in the partition).
          cardIds: board.card_id_prefix ? { Delete: { Key: keys.cardIds(board.card_id_prefix) } } : undefined,
          soleOwner: soleOwner
            ? {
                ConditionCheck: {
                  Key: keys.member(boardId, soleOwner),
                  ConditionExpression: '#role = :owner',
                  ExpressionAttributeNames: { '#role': 'role' },
                  ExpressionAttributeValues: { ':owner': 'owner' },
                },
              }
            : undefined,
        },
        board: soleOwner ? { condition: 'owner_count = :one', values: { ':one': 1 } } : undefined,
        boardRefused: () => new SoleOwnerChanged(),
      });
    } catch (error) {
      if (error instanceof SoleOwnerChanged || (soleOwner && cancellationCodes(error)?.includes('ConditionalCheckFailed'))) {
        throw new BoardChanged();
      }
      throw error;
    }
  });
  const members = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId), ':prefix': keys.memberPrefix },
    ProjectionExpression: 'pk, sk, user_id',
  });
  await deleteItems(members.flatMap((m) => [{ pk: m.pk, sk: m.sk }, keys.userBoard(m.user_id as string, boardId)]));
}

/** The account deletion's premise (its user the board's one owner) no longer holds. */
class SoleOwnerChanged extends Error {}

/**
 * Raised out of deleteBoardAs when the board no longer fits an account deletion's premise: not
 * a LostRace (which retryLostRaces would retry here), so that the caller looks again.
 */
export class BoardChanged extends Error {
  override name = 'BoardChanged';
}

/**
 * The collector's work after a board's deletion: every item of the partition, plus the items
 * outside it that point into it. Each page's deletes run while the next page is read. Safe to
 * run again after an interruption: it deletes whatever is still there. Watches stay: the
 * broadcaster still needs them to tell the watchers `board.deleted`, and drops them itself.
 * The board's card-id prefix item went with the board item; it is deleted again here, by the
 * prefix its cards' ids carry, for a deletion made by a version that did not know it and handed
 * to this one (during a deployment). The prefix was claimed on condition that no board held it,
 * so no other board's item is at that key.
 */
export async function deleteBoardContents(boardId: string): Promise<void> {
  const prefixes = new Set<string>();
  // The chain always has a handler, so a failed batch never becomes an unhandled rejection
  // (which would end the Lambda process) while the next page is still being read.
  let deleting: Promise<void> = Promise.resolve();
  let failure: unknown;
  await queryPages(
    {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.boardPartition(boardId) },
      ProjectionExpression: 'pk, sk, id, user_id',
    },
    (items: Item[]) => {
      const doomed: ItemKey[] = [];
      for (const item of items) {
        if (item.sk.startsWith(keys.watchPrefix)) continue;
        // A webhook outlives its board until `board.deleted` and its earlier deliveries have been
        // sent (webhooks.md): the webhook fanout gives it and its lookup a TTL when it hands that
        // event out, and the routes already answer 404 (the board is gone).
        if (item.sk.startsWith(keys.webhookPrefix)) continue;
        doomed.push({ pk: item.pk, sk: item.sk });
        if (item.sk.startsWith(keys.memberPrefix)) doomed.push(keys.userBoard(item.user_id as string, boardId));
        else if (item.sk.startsWith(keys.columnPrefix)) doomed.push(keys.columnLookup(item.id as string));
        else if (item.sk.startsWith(keys.cardPrefix) || item.sk.startsWith(keys.archivedCardPrefix)) {
          const lookup = keys.cardOwnLookup(item.id as string);
          const prefix = cardIdPrefixOf(item.id as string);
          if (lookup) doomed.push(lookup);
          else if (prefix !== undefined && !prefixes.has(prefix)) {
            prefixes.add(prefix);
            doomed.push(keys.cardIds(prefix));
          }
        } else if (item.sk.startsWith(keys.labelPrefix)) doomed.push(keys.labelLookup(item.id as string));
        else if (item.sk.startsWith(keys.commentPrefix)) doomed.push(keys.commentLookup(item.id as string));
      }
      deleting = deleting
        .then(() => (failure === undefined ? deleteItems(doomed) : undefined))
        .catch((error: unknown) => {
          failure ??= error;
        });
      return failure === undefined ? undefined : false;
    },
  );
  await deleting;
  if (failure !== undefined) throw failure;
}
