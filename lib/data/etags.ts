import { createHash } from 'node:crypto';
import { PreconditionFailed } from '../domain/errors';
import { type Card, type CardContext, type CardRecord, toCard } from './records';

/**
 * Entity tags of the two bodies that have one: a card and a board's tree. Both are strong and
 * opaque to clients; what they are made of is why they change exactly when their body would.
 */

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** `If-Match` or `If-None-Match` as parsed (lib/http/conditional.ts): `*`, or the entity tags listed as sent. */
export type EntityTags = '*' | string[];

/** A card's write counter: every write of the card advances it; a card stored before it had one is at 0. */
export const versionOf = (card: Pick<CardRecord, 'version'>) => card.version ?? 0;

/**
 * A card as GET /cards/{id} shows it, and its entity tag. The tag hashes the card's id and write
 * counter (every write of the card advances it, so an edit undone by another edit is still a new
 * tag) with the body and the names of the labels it shows: a label deleted or renamed on the board
 * changes the tag of exactly the cards that show it, a member leaving changes the tag of exactly
 * the cards that showed them (the body's assignee_ids), and a change of another card changes nothing.
 */
export function shownCard(card: CardRecord, board: CardContext): { card: Card; etag: string } {
  const shown = toCard(card, board);
  const names = shown.label_ids.map((id) => board.labels?.[id]);
  return { card: shown, etag: `"${digest(JSON.stringify(['card', card.id, versionOf(card), shown, names]))}"` };
}

/**
 * The `If-Match` of a card write, checked on the card and the board's labels as the write will
 * find them (its transaction requires the card's write counter and the board's `seq` as read):
 * not listed, the write is refused with the card's current tag and nothing is written.
 */
export function requireCardMatch(ifMatch: EntityTags | undefined, card: CardRecord, board: CardContext): void {
  if (ifMatch === undefined || ifMatch === '*') return;
  const { etag } = shownCard(card, board);
  if (!ifMatch.includes(etag)) throw new PreconditionFailed(etag);
}

/**
 * A board tree's tag: `"<seq>.<board>.<body>"`. Every change of the tree is a change of the board's
 * event log and advances its `seq`, and the tree holds nothing about its reader, so a tag whose
 * `seq` is the board's current one names the current tree: that is all a re-read has to check (the
 * board item, read with the membership, and nothing of the columns or cards). The body's hash
 * makes the tag name exactly the bytes answered: the tree is read after the board item, so a
 * change landing in between can be in a tree whose `seq` is still the older one; such a tree gets a
 * tag of its own, and is never answered 304 once the change is in `seq` (its `seq` is then older).
 */
export const boardTreeETag = (boardId: string, seq: number, json: string, view = '') =>
  `"${seq}.${boardKeyOf(boardId, view)}.${digest(json)}"`;

/**
 * The board and the view of it (the tree's filters, lib/data/boards.ts treeViewOf; empty for the
 * whole tree): a tag of one filtered tree never names another view of the same board at the same `seq`.
 */
const boardKeyOf = (boardId: string, view: string) =>
  digest(view === '' ? `board:${boardId}` : `board:${boardId}?${view}`).slice(0, 8);

/**
 * The tag among `tags` that names the board's current tree: one the service gave for this board
 * at its current `seq` (a tag of another board or an earlier `seq` never does).
 */
export function currentBoardTag(tags: string[], boardId: string, seq: number, view = ''): string | undefined {
  const prefix = `"${seq}.${boardKeyOf(boardId, view)}.`;
  return tags.map((tag) => (tag.startsWith('W/') ? tag.slice(2) : tag)).find((tag) => tag.startsWith(prefix));
}
