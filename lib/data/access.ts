import { cardIdPrefixOf } from '../domain/card-ids';
import { Forbidden, NotFound } from '../domain/errors';
import { getItems, type Item, type ItemSet } from './db';
import {
  type BoardRecord,
  type CardLookup,
  type CardRecord,
  type ColumnLookup,
  type ColumnRecord,
  type CommentLookup,
  type CommentRecord,
  isLiveLabel,
  type LabelRecord,
  type MemberRecord,
  type Role,
  type WebhookRecord,
} from './records';
import { type ItemKey, keys } from './table';

/**
 * How a route reaches its board, and what the caller must be there. Every route row declares one
 * (lib/routes.ts); a row without one does not type-check.
 */
export type AccessRule =
  | { scope: 'public' }
  | { scope: 'user' }
  | { scope: 'board'; via: 'board' | 'column' | 'card' | 'label' | 'webhook' | 'comment'; role: Role };

/** Ids named in the request besides the addressed one, fetched in the same round trips. */
export interface RelatedIds {
  columns?: (string | null | undefined)[];
  cards?: (string | null | undefined)[];
  labels?: (string | null | undefined)[];
  /**
   * Read each related card wherever it may be, archived or not (cardKeys: a batch, whose
   * operations address cards by id); without it, a card is read at its place in a column only
   * (a move's neighbours: an archived one is not found).
   */
  archivedCards?: boolean;
}

/** A related id as found: `boardId` from its lookup, the item when it is on the addressed board. */
export interface Related<T> {
  boardId: string;
  item?: T;
  /** A column's card-create version, from its lookup (read first: lib/data/cards.ts says why). */
  cardVersion?: number;
}

/** How a board route reaches its board: by its id, or through the lookup of the addressed child. */
export type Via = Extract<AccessRule, { scope: 'board' }>['via'];

/** What every board route's access check establishes, however the board was reached. */
interface ScopeOfBoard {
  boardId: string;
  board: BoardRecord;
  member: MemberRecord;
  relatedColumns: Map<string, Related<ColumnRecord>>;
  relatedCards: Map<string, Related<CardRecord>>;
  relatedLabels: Map<string, Related<LabelRecord>>;
}

/** The addressed item each way of reaching the board brings, found and live. */
interface Addressed {
  board: Record<never, never>;
  column: {
    column: ColumnRecord;
    /** Card-create version of the addressed column, read before anything else (lib/data/cards.ts). */
    columnCardVersion: number;
  };
  /** The card, archived or not (`archived_at`). */
  card: { card: CardRecord };
  /** The comment and the card it is on (archived or not). */
  comment: { comment: CommentRecord; card: CardRecord };
  label: { label: LabelRecord };
  webhook: { webhook: WebhookRecord };
}

type AddressedVia = { [V in Via]: { via: V } & Addressed[V] }[Via];

/** A board route's scope, keyed by how the route reaches its board (`via`, from its row's AccessRule). */
export type BoardScope = ScopeOfBoard & AddressedVia;
export type ScopeVia<V extends Via> = Extract<BoardScope, { via: V }>;

/** The user making the request: the member the access check found. */
export const actorOf = (scope: BoardScope) => scope.member.user_id;

/** Work that depends only on the board id and runs alongside the second round trip. */
export type Preload<P> = (found: { boardId: string; columnId?: string }) => Promise<P>;

const present = (ids: (string | null | undefined)[] = []) => [...new Set(ids.filter((id): id is string => !!id))];

/**
 * Where a card is read: at the one key its own lookup names (archived or not), or, for an id
 * under its board's prefix (lib/domain/card-ids.ts), whose board's item cannot say, at both keys:
 * one read unit more than needed, and no round trip more.
 */
function cardKeys(boardId: string, cardId: string, lookup: CardLookup | undefined): ItemKey[] {
  if (cardIdPrefixOf(cardId) !== undefined) return [keys.card(boardId, cardId), keys.archivedCard(boardId, cardId)];
  return [lookup?.archived ? keys.archivedCard(boardId, cardId) : keys.card(boardId, cardId)];
}

/**
 * How a board route reaches the addressed child: its id lookup, the keys of what to read with it
 * (from what the lookup says), and its name in a 404. A card is read where cardKeys says; a
 * comment's lookup names its card, read at both keys.
 */
const CHILD_WAYS = {
  column: { lookup: keys.columnLookup, items: (boardId, id) => [keys.column(boardId, id)], what: 'Column' },
  card: { lookup: keys.cardBoardLookup, items: cardKeys, what: 'Card' },
  comment: {
    lookup: keys.commentLookup,
    items: (boardId, id, lookup) => {
      const cardId = (lookup as CommentLookup | undefined)?.card_id;
      if (!cardId) return [];
      return [keys.comment(boardId, cardId, id), keys.card(boardId, cardId), keys.archivedCard(boardId, cardId)];
    },
    what: 'Comment',
  },
  label: { lookup: keys.labelLookup, items: (boardId, id) => [keys.label(boardId, id)], what: 'Label' },
  webhook: { lookup: keys.webhookLookup, items: (boardId, id) => [keys.webhook(boardId, id)], what: 'Webhook' },
} as const satisfies Record<
  Exclude<Via, 'board'>,
  {
    lookup: (id: string) => ItemKey;
    items: (boardId: string, id: string, lookup: (CardLookup & Partial<CommentLookup>) | undefined) => ItemKey[];
    what: string;
  }
>;

/** The kinds of related ids, in the order their keys go into each round trip. */
const RELATED_KINDS = {
  columns: { lookup: keys.columnLookup, item: keys.column },
  cards: { lookup: keys.cardBoardLookup, item: keys.card },
  labels: { lookup: keys.labelLookup, item: keys.label },
} as const;
type RelatedKind = keyof typeof RELATED_KINDS;
const RELATED_ORDER: RelatedKind[] = ['columns', 'cards', 'labels'];

/** The related ids named in the request, each once, by kind. */
type RelatedIdLists = Record<RelatedKind, string[]>;

/** The board the addressed id belongs to, as its lookup (or the id itself) says, and the lookup itself. */
interface BoardReached {
  boardId: string;
  columnCardVersion: number;
  lookup?: CardLookup & Partial<CommentLookup>;
}

/**
 * Resolves the addressed board and checks the caller's membership in the spec's order of checks,
 * in at most two round trips: (1) the id lookups (addressed column/card and related ids), (2) the
 * board, the caller's membership, the addressed item and related items of the same board.
 */
export async function resolveBoardScope<P>(
  rule: Extract<AccessRule, { scope: 'board' }>,
  callerId: string,
  addressedId: string,
  related: RelatedIds = {},
  preload?: Preload<P>,
): Promise<{ scope: BoardScope; preloaded: P | undefined }> {
  const ids: RelatedIdLists = {
    columns: present(related.columns),
    cards: present(related.cards),
    labels: present(related.labels),
  };
  const lookupKeys = lookupKeysOf(rule.via, addressedId, ids);
  const archivedCards = related.archivedCards === true;
  const lookups = lookupKeys.length > 0 ? await getItems(lookupKeys) : undefined;
  const reached = boardReached(rule.via, addressedId, lookups);
  const { boardId } = reached;

  const [found, preloaded] = await Promise.all([
    getItems(scopeItemKeys(rule.via, callerId, addressedId, reached, ids, lookups, archivedCards)),
    preload?.({ boardId, columnId: rule.via === 'column' ? addressedId : undefined }),
  ]);
  const items = await withCardArchivedMeanwhile(rule.via, addressedId, reached, found);

  const relatedItems = relatedItemsOf(ids, boardId, lookups, items, archivedCards);
  const { board, member, addressed } = checkAddressed(rule.via, addressedId, reached, callerId, items);
  if (rule.role === 'owner' && member.role !== 'owner') {
    throw new Forbidden('Only an owner of this board may do this.');
  }
  const scope: BoardScope = { boardId, board, member, ...relatedItems, ...addressed };
  return { scope, preloaded };
}

/** The first round trip's keys: the addressed child's lookup, then every related id's. */
function lookupKeysOf(via: Via, addressedId: string, ids: RelatedIdLists): ItemKey[] {
  return [
    ...(via === 'board' ? [] : [CHILD_WAYS[via].lookup(addressedId)]),
    ...RELATED_ORDER.flatMap((kind) => ids[kind].map(RELATED_KINDS[kind].lookup)),
  ];
}

/** The addressed board: the id itself, or the board its child's lookup names (none: the child is 404). */
function boardReached(via: Via, addressedId: string, lookups: ItemSet | undefined): BoardReached {
  if (via === 'board') return { boardId: addressedId, columnCardVersion: 0 };
  const way = CHILD_WAYS[via];
  const lookup = lookups?.get<CardLookup & Partial<ColumnLookup> & Partial<CommentLookup>>(way.lookup(addressedId));
  if (!lookup) throw new NotFound(way.what);
  return { boardId: lookup.board_id, columnCardVersion: via === 'column' ? (lookup.card_version ?? 0) : 0, lookup };
}

/**
 * A card archived or restored between the two round trips may be at neither key read: the key its
 * own lookup named, or (an id under its board's prefix) both keys, which one BatchGetItem reads
 * one after the other, not as one snapshot, so a move between them finds the card at neither.
 * Both keys are read again (a third round trip, only in that race, and before a 404 for an id of
 * no card under a real prefix), so that a card being archived is never answered 404. A card
 * deleted meanwhile is at neither: 404 as before.
 */
async function withCardArchivedMeanwhile(via: Via, cardId: string, reached: BoardReached, found: ItemSet): Promise<ItemSet> {
  const { boardId } = reached;
  if (via !== 'card' || !found.get(keys.board(boardId))) return found;
  if (CHILD_WAYS.card.items(boardId, cardId, reached.lookup).some((key) => found.get(key))) return found;
  const card = await cardAtEitherKey(boardId, cardId);
  if (card) found.add(card as unknown as Item);
  return found;
}

/** A card read at both of its keys, archived or not; undefined when it is at neither (deleted). */
export async function cardAtEitherKey(boardId: string, cardId: string): Promise<CardRecord | undefined> {
  const found = await getItems([keys.card(boardId, cardId), keys.archivedCard(boardId, cardId)]);
  return found.get<CardRecord>(keys.card(boardId, cardId)) ?? found.get<CardRecord>(keys.archivedCard(boardId, cardId));
}

/**
 * The second round trip's keys: the board, the caller's membership and profile, the addressed
 * child, the related items of this board, and the other boards the related ids belong to.
 */
function scopeItemKeys(
  via: Via,
  callerId: string,
  addressedId: string,
  { boardId, lookup }: BoardReached,
  ids: RelatedIdLists,
  lookups: ItemSet | undefined,
  archivedCards: boolean,
): ItemKey[] {
  const boardOf = (kind: RelatedKind, id: string) => lookups?.get<{ board_id: string }>(RELATED_KINDS[kind].lookup(id))?.board_id;
  // An id of another board is refused as such (403) only while that board exists: once its
  // deletion has begun, its children are gone for everybody (404), lookups not yet collected
  // included. Its board item comes in the same round trip, so this costs no extra one.
  const otherBoards = present(RELATED_ORDER.flatMap((kind) => ids[kind].map((id) => boardOf(kind, id)))).filter(
    (id) => id !== boardId,
  );
  return [
    keys.board(boardId),
    keys.member(boardId, callerId),
    // A deleted account's profile is gone at once, its memberships only once the account
    // collector has run: without a profile the caller is a member of nothing (docs/accounts.md).
    keys.userProfile(callerId),
    ...(via === 'board' ? [] : CHILD_WAYS[via].items(boardId, addressedId, lookup)),
    ...RELATED_ORDER.flatMap((kind) =>
      ids[kind].flatMap((id) => {
        const on = boardOf(kind, id);
        if (on === boardId) return relatedItemKeys(kind, boardId, id, lookups, archivedCards);
        // A card id under another board's prefix names a card of that board only if it is there:
        // a batch answers 403 for one that is, and 404 for one that is not, as for any other id.
        if (on && kind === 'cards' && archivedCards && cardIdPrefixOf(id) !== undefined) {
          return relatedItemKeys(kind, on, id, lookups, archivedCards);
        }
        return [];
      }),
    ),
    ...otherBoards.map(keys.board),
  ];
}

/** Where a related id's item is read: its kind's key, or (`archivedCards`) wherever the card may be (cardKeys). */
function relatedItemKeys(
  kind: RelatedKind,
  boardId: string,
  id: string,
  lookups: ItemSet | undefined,
  archivedCards: boolean,
): ItemKey[] {
  if (kind === 'cards' && archivedCards) return cardKeys(boardId, id, lookups?.get<CardLookup>(keys.cardBoardLookup(id)));
  return [RELATED_KINDS[kind].item(boardId, id)];
}

/** The related ids found, each with its board, and its item when that is the addressed board. */
function relatedItemsOf(
  ids: RelatedIdLists,
  boardId: string,
  lookups: ItemSet | undefined,
  items: ItemSet,
  archivedCards: boolean,
): Pick<ScopeOfBoard, 'relatedColumns' | 'relatedCards' | 'relatedLabels'> {
  const live = (otherBoardId: string) => otherBoardId === boardId || items.get(keys.board(otherBoardId)) !== undefined;
  const found = <T>(kind: RelatedKind) =>
    relatedMap<T>(
      ids[kind],
      RELATED_KINDS[kind].lookup,
      (id, on) =>
        relatedItemKeys(kind, on, id, lookups, archivedCards)
          .map((key) => items.get<T>(key))
          .find((item) => item),
      lookups,
      live,
      // A card's own lookup goes with the card; its board's prefix item does not: found only if read.
      kind === 'cards' ? (id) => cardIdPrefixOf(id) !== undefined : () => false,
      boardId,
    );
  return {
    relatedColumns: found<ColumnRecord>('columns'),
    relatedCards: found<CardRecord>('cards'),
    relatedLabels: found<LabelRecord>('labels'),
  };
}

/**
 * The spec's order of checks on what the second round trip found: for a board, membership before
 * existence (a non-member asking for a board id that does not exist gets forbidden, spec part 7);
 * for a child, its board and the child itself before membership.
 */
function checkAddressed(
  via: Via,
  addressedId: string,
  reached: BoardReached,
  callerId: string,
  items: ItemSet,
): { board: BoardRecord; member: MemberRecord; addressed: AddressedVia } {
  const { boardId } = reached;
  const board = items.get<BoardRecord>(keys.board(boardId));
  const member = items.get(keys.userProfile(callerId)) ? items.get<MemberRecord>(keys.member(boardId, callerId)) : undefined;
  if (via === 'board') {
    if (!member) throw new Forbidden();
    if (!board) throw new NotFound('Board');
    return { board, member, addressed: { via: 'board' } };
  }
  // A child of a board whose deletion has begun is already gone for everybody.
  if (!board) throw new NotFound(CHILD_WAYS[via].what);
  const addressed = liveChild(via, addressedId, reached, board, items);
  if (!member) throw new Forbidden();
  return { board, member, addressed };
}

/** The addressed child on its live board, or 404 when it is gone or on its way out. */
function liveChild(
  via: Exclude<Via, 'board'>,
  addressedId: string,
  { boardId, columnCardVersion, lookup }: BoardReached,
  board: BoardRecord,
  items: ItemSet,
): AddressedVia {
  if (via === 'webhook') {
    // A deleted board's webhooks linger (with a ttl) until their deliveries end: the board item
    // is gone at once, so they are 404 before this; a webhook with a ttl is on its way out: 404 too.
    const webhook = items.get<WebhookRecord>(keys.webhook(boardId, addressedId));
    if (!webhook || webhook.ttl !== undefined) throw new NotFound('Webhook');
    return { via: 'webhook', webhook };
  }
  if (via === 'label') {
    const label = items.get<LabelRecord>(keys.label(boardId, addressedId));
    // The board's map of live labels decides: a label being deleted is already gone.
    if (!label || !isLiveLabel(board.labels, addressedId)) throw new NotFound('Label');
    return { via: 'label', label };
  }
  if (via === 'column') {
    const column = items.get<ColumnRecord>(keys.column(boardId, addressedId));
    if (!column) throw new NotFound('Column');
    return { via: 'column', column, columnCardVersion };
  }
  if (via === 'comment') {
    const cardId = lookup?.card_id ?? '';
    const comment = items.get<CommentRecord>(keys.comment(boardId, cardId, addressedId));
    const card = liveCard(board, items, boardId, cardId);
    // A comment goes with its card: one whose card is gone (or going with its column) is gone too.
    if (!comment || !card) throw new NotFound('Comment');
    return { via: 'comment', comment, card };
  }
  const card = liveCard(board, items, boardId, addressedId);
  if (!card) throw new NotFound('Card');
  return { via: 'card', card };
}

/**
 * A card of the board as read, archived or not, unless it is gone. Spec rule (b): its column
 * exists. A card outlives its column only while the column's deletion is removing it (archived
 * cards of the column too), and the board item names such columns.
 */
function liveCard(board: BoardRecord, items: ItemSet, boardId: string, cardId: string): CardRecord | undefined {
  const card = items.get<CardRecord>(keys.card(boardId, cardId)) ?? items.get<CardRecord>(keys.archivedCard(boardId, cardId));
  if (!card || board.deleting_columns?.has(card.column_id)) return undefined;
  return card;
}

/**
 * The related ids of one kind whose lookup was found on a live board, each with its item when it
 * is on the addressed board. `sharedLookup`: an id whose lookup is shared with others (a card id
 * under its board's prefix): on another board, found only when its item was (`item`, read on
 * the board it names).
 */
function relatedMap<T>(
  ids: string[],
  lookupKey: (id: string) => ItemKey,
  item: (id: string, boardId: string) => T | undefined,
  lookups: ItemSet | undefined,
  boardExists: (boardId: string) => boolean,
  sharedLookup: (id: string) => boolean,
  addressedBoardId: string,
): Map<string, Related<T>> {
  const found = new Map<string, Related<T>>();
  for (const id of ids) {
    const lookup = lookups?.get<{ board_id: string; card_version?: number }>(lookupKey(id));
    if (!lookup || !boardExists(lookup.board_id)) continue;
    const read = item(id, lookup.board_id);
    // On the addressed board it stays, without its item, as an own lookup's id whose card was not
    // at the key read: the batch reads such cards again (archived or restored meanwhile).
    if (sharedLookup(id) && read === undefined && lookup.board_id !== addressedBoardId) continue;
    const cardVersion = lookup.card_version;
    found.set(id, {
      boardId: lookup.board_id,
      item: lookup.board_id === addressedBoardId ? read : undefined,
      ...(cardVersion === undefined ? {} : { cardVersion }),
    });
  }
  return found;
}

/**
 * An id named in the body that must be an item of the addressed board: its item, or NotFound
 * (a missing id and another board's id look the same to the caller). No id: undefined.
 */
export function relatedOnBoard<T>(
  related: Map<string, Related<T>>,
  boardId: string,
  id: string | null | undefined,
  what: string,
): T | undefined {
  if (!id) return undefined;
  const found = related.get(id);
  if (!found?.item || found.boardId !== boardId) throw new NotFound(what);
  return found.item;
}
