import type { Board, BoardTree, ColumnWithCards } from '../data/records';
import { ResponseTooLarge } from '../domain/errors';
import { boardListTooLargeDetail, boardTooLargeDetail, columnTooLargeDetail } from '../rows/oversize';

/** The 422s of the answers over what Lambda may send: each names what to read instead (lib/rows/oversize.ts). */
export const boardListTooLarge = (boards: Board[]) => (compressed: boolean) =>
  new ResponseTooLarge(boardListTooLargeDetail(compressed), { board_ids: boards.map((board) => board.id) });

export const boardTooLarge = (tree: BoardTree) => (compressed: boolean) =>
  new ResponseTooLarge(boardTooLargeDetail(compressed), {
    columns: tree.columns.map((column) => ({ id: column.id, title: column.title, cards: column.cards.length })),
  });

export const columnTooLarge = (column: ColumnWithCards) => (compressed: boolean) =>
  new ResponseTooLarge(columnTooLargeDetail(compressed), { card_ids: column.cards.map((card) => card.id) });
