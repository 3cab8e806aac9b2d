import { byLabelName } from '../../lib/domain/ordering';
import { type CardView, type ColumnView, call, type Reply, type TestUser } from './api';
import type { Frame } from './sockets';

/**
 * The board's event log from a client's side (docs/reference.md, "Sequence numbers and
 * catching up"): the tree's and the log's `seq`, pages of `GET /boards/{id}/events`, and a small
 * reducer that applies events to a tree the way a client following the recipe would.
 */

/** An event as the log lists it and watchers receive it. */
export interface LoggedEvent extends Frame {
  event_id: string;
  board_id: string;
  actor_id: string;
  occurred_at: string;
  seq: number;
}

export interface EventPage {
  events: LoggedEvent[];
  latest_seq: number;
}

/** The tree as GET /boards/{id} answers it, with its `seq`. */
export interface SeqTree {
  id: string;
  owner_id: string;
  title: string;
  created_at: string;
  seq: number;
  columns: (ColumnView & { cards: (CardView & { label_ids?: string[] })[] })[];
  [field: string]: unknown;
}

/** GET /boards/{id} as `user`, which must answer 200: the tree with its `seq`. */
export async function readSeqTree(user: Pick<TestUser, 'token'>, boardId: string, url?: string): Promise<SeqTree> {
  const reply = await call<SeqTree>('GET', `/boards/${boardId}`, { token: user.token, url });
  if (reply.status !== 200) throw new Error(`GET /boards/${boardId}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** The board's latest `seq`, as its tree carries it. */
export const boardSeq = async (user: Pick<TestUser, 'token'>, boardId: string, url?: string) =>
  (await readSeqTree(user, boardId, url)).seq;

/** GET /boards/{id}/events with the query as given (strings sent as they are), whatever it answers. */
export function getEvents(
  user: Pick<TestUser, 'token'>,
  boardId: string,
  query: Record<string, string | number> = {},
  url?: string,
): Promise<Reply<EventPage>> {
  const search = new URLSearchParams(
    Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();
  return call<EventPage>('GET', `/boards/${boardId}/events${search ? `?${search}` : ''}`, { token: user.token, url });
}

/** Every event after `after`, page by page (the recipe's catch-up), until a page reaches `latest_seq`. */
export async function readAllEvents(
  user: Pick<TestUser, 'token'>,
  boardId: string,
  after = 0,
  limit = 1000,
  url?: string,
): Promise<{ events: LoggedEvent[]; latest_seq: number; pages: number }> {
  const events: LoggedEvent[] = [];
  let from = after;
  for (let pages = 1; ; pages++) {
    const reply = await getEvents(user, boardId, { after: from, limit }, url);
    if (reply.status !== 200) throw new Error(`events after ${from}: ${reply.status} ${JSON.stringify(reply.body)}`);
    events.push(...reply.body.events);
    const last = reply.body.events.at(-1)?.seq;
    if (last === undefined || last >= reply.body.latest_seq) return { events, latest_seq: reply.body.latest_seq, pages };
    from = last;
  }
}

/** 1, 2, …, n. */
export const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** Positions, then created_at (columns show none: then id), then id: the order the tree lists columns and cards in. */
const byPlace = <T extends { position: number; created_at?: string; id: string }>(a: T, b: T) =>
  a.position - b.position || (a.created_at ?? '').localeCompare(b.created_at ?? '') || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A label as the tree lists it. */
interface LabelView {
  id: string;
  board_id: string;
  name: string;
  color: string;
}

/**
 * A client's copy of a board: the tree with the `seq` it reflects (its `labels` included). Kept as
 * a type of its own so that what a client holds is named in the tests.
 */
export interface ClientBoard {
  tree: SeqTree;
}

/** A client's copy from GET /boards/{id}. */
export async function readClientBoard(user: Pick<TestUser, 'token'>, boardId: string, url?: string): Promise<ClientBoard> {
  return { tree: await readSeqTree(user, boardId, url) };
}

/**
 * Applies one event to a client's copy, as a client following the recipe would: events carry
 * whole objects, so each replaces what it names; the tree's labels and a card's label_ids follow
 * the board's label order (name, case-insensitively, then id), which a label's rename changes.
 * `seq` becomes the event's. Throws on an event the reducer does not know, so a new kind cannot
 * slip by unapplied.
 */
export function applyEvent(board: ClientBoard, event: LoggedEvent): ClientBoard {
  const tree: SeqTree = structuredClone(board.tree);
  const labels = (tree.labels ?? []) as LabelView[];
  const dropCard = (cardId: string) => {
    for (const column of tree.columns) column.cards = column.cards.filter((card) => card.id !== cardId);
  };
  const putCard = (card: CardView) => {
    dropCard(card.id);
    const column = tree.columns.find((c) => c.id === card.column_id);
    if (!column) throw new Error(`event ${event.seq} puts card ${card.id} into unknown column ${card.column_id}`);
    column.cards.push(structuredClone(card));
    column.cards.sort(byPlace);
  };
  const sortLabels = () => {
    labels.sort(byLabelName);
    const rank = new Map(labels.map((label, i) => [label.id, i]));
    for (const column of tree.columns)
      for (const card of column.cards) card.label_ids?.sort((a, b) => (rank.get(a) ?? -1) - (rank.get(b) ?? -1));
  };
  switch (event.type) {
    case 'card.created':
    case 'card.updated':
    case 'card.moved':
      putCard(event.card as CardView);
      break;
    case 'card.deleted':
      dropCard(event.card_id as string);
      break;
    // An archived card leaves its column; a restored one comes back with its new position.
    case 'card.archived':
      dropCard((event.card as CardView).id);
      break;
    case 'card.restored':
      putCard(event.card as CardView);
      break;
    // A comment changes only its card's count (no card.updated is sent for it).
    case 'comment.created':
    case 'comment.deleted': {
      const cardId =
        event.type === 'comment.created' ? (event.comment as { card_id: string }).card_id : (event.card_id as string);
      for (const column of tree.columns) {
        for (const card of column.cards as (CardView & { comment_count?: number })[]) {
          if (card.id === cardId) card.comment_count = (card.comment_count ?? 0) + (event.type === 'comment.created' ? 1 : -1);
        }
      }
      break;
    }
    case 'comment.updated':
      break;
    case 'column.created':
    case 'column.updated':
    case 'column.moved': {
      const column = event.column as ColumnView;
      const existing = tree.columns.find((c) => c.id === column.id);
      if (existing) Object.assign(existing, column);
      else tree.columns.push({ ...column, cards: [] });
      tree.columns.sort(byPlace);
      break;
    }
    case 'column.deleted':
      tree.columns = tree.columns.filter((c) => c.id !== event.column_id);
      break;
    case 'board.updated':
      Object.assign(tree, event.board as object);
      break;
    case 'label.created':
    case 'label.updated': {
      const label = event.label as LabelView;
      const at = labels.findIndex((l) => l.id === label.id);
      if (at >= 0) labels[at] = structuredClone(label);
      else labels.push(structuredClone(label));
      sortLabels();
      break;
    }
    case 'label.deleted': {
      const at = labels.findIndex((l) => l.id === event.label_id);
      if (at >= 0) labels.splice(at, 1);
      for (const column of tree.columns)
        for (const card of column.cards) card.label_ids = card.label_ids?.filter((id) => id !== event.label_id);
      break;
    }
    // Members are not part of the tree; one who leaves is no card's assignee any more.
    case 'member.added':
    case 'member.updated':
      break;
    case 'member.removed':
      for (const column of tree.columns) {
        for (const card of column.cards as (CardView & { assignee_ids?: string[] })[]) {
          card.assignee_ids = card.assignee_ids?.filter((id) => id !== event.user_id);
        }
      }
      break;
    default:
      throw new Error(`the reducer does not know ${event.type}`);
  }
  if (tree.labels) tree.labels = labels;
  tree.seq = event.seq;
  return { tree };
}
