import { Forbidden, NotFound } from '../domain/errors';
import { getItems, type ItemSet } from './db';
import {
  type BoardRecord,
  type CardLookup,
  type CardRecord,
  type ColumnLookup,
  type ColumnRecord,
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
  | { scope: 'board'; via: 'board' | 'column' | 'card' | 'label' | 'webhook'; role: Role };

/** Ids named in the request besides the addressed one, fetched in the same round trips. */
export interface RelatedIds {
  columns?: (string | null | undefined)[];
  cards?: (string | null | undefined)[];
  labels?: (string | null | undefined)[];
}

/** A related id as found: `boardId` from its lookup, the item when it is on the addressed board. */
export interface Related<T> {
  boardId: string;
  item?: T;
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
  card: { card: CardRecord };
  label: { label: LabelRecord };
  webhook: { webhook: WebhookRecord };
}

type AddressedVia = { [V in Via]: { via: V } & Addressed[V] }[Via];

/** A board route's scope, keyed by how the route reaches its board (`via`, from its row's AccessRule). */
export type BoardScope = ScopeOfBoard & AddressedVia;
export type ScopeVia<V extends Via> = Extract<BoardScope, { via: V }>;

/**
 * The scope of a route whose row reaches its board `via`: every board route's scope has the one
 * type BoardScope in the HTTP chain (lib/http/chain.ts), so a handler names the way its row
 * declares, and a row that says otherwise fails here (a bug, 500) rather than with an undefined item.
 */
export function scopeVia<V extends Via>(scope: BoardScope, via: V): ScopeVia<V> {
  if (scope.via !== via) throw new Error(`the route reached its board via ${scope.via}, not ${via}`);
  return scope as ScopeVia<V>;
}

/** The user making the request: the member the access check found. */
export const actorOf = (scope: BoardScope) => scope.member.user_id;

/** Work that depends only on the board id and runs alongside the second round trip. */
export type Preload<P> = (found: { boardId: string; columnId?: string }) => Promise<P>;

const present = (ids: (string | null | undefined)[] = []) => [...new Set(ids.filter((id): id is string => !!id))];

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
  const relatedColumnIds = present(related.columns);
  const relatedCardIds = present(related.cards);
  const relatedLabelIds = present(related.labels);
  const lookupKeys: ItemKey[] = [
    ...(rule.via === 'column' ? [keys.columnLookup(addressedId)] : []),
    ...(rule.via === 'card' ? [keys.cardLookup(addressedId)] : []),
    ...(rule.via === 'label' ? [keys.labelLookup(addressedId)] : []),
    ...(rule.via === 'webhook' ? [keys.webhookLookup(addressedId)] : []),
    ...relatedColumnIds.map(keys.columnLookup),
    ...relatedCardIds.map(keys.cardLookup),
    ...relatedLabelIds.map(keys.labelLookup),
  ];
  const lookups = lookupKeys.length > 0 ? await getItems(lookupKeys) : undefined;

  let boardId = addressedId;
  let columnCardVersion = 0;
  if (rule.via === 'column') {
    const lookup = lookups?.get<ColumnLookup>(keys.columnLookup(addressedId));
    if (!lookup) throw new NotFound('Column');
    boardId = lookup.board_id;
    columnCardVersion = lookup.card_version ?? 0;
  } else if (rule.via === 'card') {
    const lookup = lookups?.get<CardLookup>(keys.cardLookup(addressedId));
    if (!lookup) throw new NotFound('Card');
    boardId = lookup.board_id;
  } else if (rule.via === 'label') {
    const lookup = lookups?.get<{ board_id: string }>(keys.labelLookup(addressedId));
    if (!lookup) throw new NotFound('Label');
    boardId = lookup.board_id;
  } else if (rule.via === 'webhook') {
    const lookup = lookups?.get<{ board_id: string }>(keys.webhookLookup(addressedId));
    if (!lookup) throw new NotFound('Webhook');
    boardId = lookup.board_id;
  }

  const boardOf = (key: ItemKey) => lookups?.get<{ board_id: string }>(key)?.board_id;
  const sameBoardColumns = relatedColumnIds.filter((id) => boardOf(keys.columnLookup(id)) === boardId);
  const sameBoardCards = relatedCardIds.filter((id) => boardOf(keys.cardLookup(id)) === boardId);
  const sameBoardLabels = relatedLabelIds.filter((id) => boardOf(keys.labelLookup(id)) === boardId);
  // An id of another board is refused as such (403) only while that board exists: once its
  // deletion has begun, its children are gone for everybody (404), lookups not yet collected
  // included. Its board item comes in the same round trip, so this costs no extra one.
  const otherBoards = present([
    ...relatedColumnIds.map((id) => boardOf(keys.columnLookup(id))),
    ...relatedCardIds.map((id) => boardOf(keys.cardLookup(id))),
    ...relatedLabelIds.map((id) => boardOf(keys.labelLookup(id))),
  ]).filter((id) => id !== boardId);

  const itemKeys: ItemKey[] = [
    keys.board(boardId),
    keys.member(boardId, callerId),
    // A deleted account's profile is gone at once, its memberships only once the account
    // collector has run: without a profile the caller is a member of nothing (docs/accounts.md).
    keys.userProfile(callerId),
    ...(rule.via === 'column' ? [keys.column(boardId, addressedId)] : []),
    ...(rule.via === 'card' ? [keys.card(boardId, addressedId)] : []),
    ...(rule.via === 'label' ? [keys.label(boardId, addressedId)] : []),
    ...(rule.via === 'webhook' ? [keys.webhook(boardId, addressedId)] : []),
    ...sameBoardColumns.map((id) => keys.column(boardId, id)),
    ...sameBoardCards.map((id) => keys.card(boardId, id)),
    ...sameBoardLabels.map((id) => keys.label(boardId, id)),
    ...otherBoards.map(keys.board),
  ];
  const [items, preloaded] = await Promise.all([
    getItems(itemKeys),
    preload?.({ boardId, columnId: rule.via === 'column' ? addressedId : undefined }),
  ]);

  const board = items.get<BoardRecord>(keys.board(boardId));
  const member = items.get(keys.userProfile(callerId)) ? items.get<MemberRecord>(keys.member(boardId, callerId)) : undefined;
  const live = (otherBoardId: string) => otherBoardId === boardId || items.get(keys.board(otherBoardId)) !== undefined;
  const relatedItems = {
    relatedColumns: relatedMap(
      relatedColumnIds,
      keys.columnLookup,
      (id) => items.get<ColumnRecord>(keys.column(boardId, id)),
      lookups,
      live,
    ),
    relatedCards: relatedMap(
      relatedCardIds,
      keys.cardLookup,
      (id) => items.get<CardRecord>(keys.card(boardId, id)),
      lookups,
      live,
    ),
    relatedLabels: relatedMap(
      relatedLabelIds,
      keys.labelLookup,
      (id) => items.get<LabelRecord>(keys.label(boardId, id)),
      lookups,
      live,
    ),
  };

  let addressed: AddressedVia;
  if (rule.via === 'board') {
    // Spec part 7: a non-member asking for a board id that does not exist gets forbidden.
    if (!member) throw new Forbidden();
    if (!board) throw new NotFound('Board');
    addressed = { via: 'board' };
  } else {
    // A child of a board whose deletion has begun is already gone for everybody.
    const what = { column: 'Column', card: 'Card', label: 'Label', webhook: 'Webhook' }[rule.via];
    if (!board) throw new NotFound(what);
    if (rule.via === 'webhook') {
      // A deleted board's webhooks linger (with a ttl) until their deliveries end: the board item
      // is gone at once, so they are 404 above; a webhook with a ttl is on its way out: 404 too.
      const webhook = items.get<WebhookRecord>(keys.webhook(boardId, addressedId));
      if (!webhook || webhook.ttl !== undefined) throw new NotFound('Webhook');
      addressed = { via: 'webhook', webhook };
    } else if (rule.via === 'label') {
      const label = items.get<LabelRecord>(keys.label(boardId, addressedId));
      // The board's map of live labels decides: a label being deleted is already gone.
      if (!label || !isLiveLabel(board.labels, addressedId)) throw new NotFound('Label');
      addressed = { via: 'label', label };
    } else if (rule.via === 'column') {
      const column = items.get<ColumnRecord>(keys.column(boardId, addressedId));
      if (!column) throw new NotFound('Column');
      addressed = { via: 'column', column, columnCardVersion };
    } else {
      const card = items.get<CardRecord>(keys.card(boardId, addressedId));
      if (!card) throw new NotFound('Card');
      // Spec rule (b): its column exists. A card outlives its column only while the column's
      // deletion is removing it, and the board item names such columns.
      if (board.deleting_columns?.has(card.column_id)) throw new NotFound('Card');
      addressed = { via: 'card', card };
    }
    if (!member) throw new Forbidden();
  }
  if (rule.role === 'owner' && member.role !== 'owner') {
    throw new Forbidden('Only an owner of this board may do this.');
  }
  const scope: BoardScope = { boardId, board, member, ...relatedItems, ...addressed };
  return { scope, preloaded };
}

function relatedMap<T>(
  ids: string[],
  lookupKey: (id: string) => ItemKey,
  item: (id: string) => T | undefined,
  lookups: ItemSet | undefined,
  boardExists: (boardId: string) => boolean,
): Map<string, Related<T>> {
  const found = new Map<string, Related<T>>();
  for (const id of ids) {
    const lookup = lookups?.get<{ board_id: string }>(lookupKey(id));
    if (lookup && boardExists(lookup.board_id)) found.set(id, { boardId: lookup.board_id, item: item(id) });
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
