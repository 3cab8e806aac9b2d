import type { Board, BoardTree, Card, ColumnWithCards } from '../data/records';
import { ResponseTooLarge } from '../domain/errors';
import { archiveTooLargeDetail, boardListTooLargeDetail, boardTooLargeDetail, columnTooLargeDetail } from '../rows/oversize';

/** The 422s of the answers over what Lambda may send: each names what to read instead (lib/rows/oversize.ts). */
export const boardListTooLarge = (boards: Board[]) => (compressed: boolean) =>
  new ResponseTooLarge(boardListTooLargeDetail(compressed), { board_ids: boards.map((board) => board.id) });

export const boardTooLarge = (tree: BoardTree) => (compressed: boolean) =>
  new ResponseTooLarge(boardTooLargeDetail(compressed), {
    columns: tree.columns.map((column) => ({ id: column.id, title: column.title, cards: column.cards.length })),
  });

export const archiveTooLarge = (cards: Card[]) => (compressed: boolean) =>
  new ResponseTooLarge(archiveTooLargeDetail(compressed), { card_ids: cards.map((card) => card.id) });

export const columnTooLarge = (column: ColumnWithCards) => (compressed: boolean) =>
  new ResponseTooLarge(columnTooLargeDetail(compressed), { card_ids: column.cards.map((card) => card.id) });
