import type { Board, BoardTree, ColumnWithCards } from '../data/records';
import { ResponseTooLarge } from '../domain/errors';
import { boardsGet } from '../rows/boards';
import { cardsGet } from '../rows/cards';
import { columnsGet } from '../rows/columns';
import { routeKeyOf } from '../rows/row';

/**
 * What a client does when an answer is over what Lambda may send (6 MB, even compressed): the
 * board list names its boards, the board tree names its columns, a column names its cards, and a
 * card (at most 16,384 characters of description) always fits. Each step is one more request, so
 * what a member may write stays readable, up to a column of about 150,000 cards (or a list of
 * about 160,000 boards), whose ids would themselves pass 6 MB (docs/performance.md, "Large
 * answers").
 */
const howSent = (compressed: boolean) =>
  compressed ? ', even compressed' : ' (send Accept-Encoding: br or gzip to get it compressed)';

export const boardListTooLargeDetail = (compressed: boolean) =>
  `Your boards are too many to list in one answer${howSent(compressed)}. Read them one at a time: ${routeKeyOf(boardsGet)} for each id in "board_ids", newest first.`;

export const boardTooLargeDetail = (compressed: boolean) =>
  `This board is too large to read in one answer${howSent(compressed)}. Read it one column at a time: ${routeKeyOf(columnsGet)} for each column listed in "columns".`;

export const columnTooLargeDetail = (compressed: boolean) =>
  `This column is too large to read in one answer${howSent(compressed)}. Read its cards one at a time: ${routeKeyOf(cardsGet)} for each id in "card_ids", in column order.`;

export const boardListTooLarge = (boards: Board[]) => (compressed: boolean) =>
  new ResponseTooLarge(boardListTooLargeDetail(compressed), { board_ids: boards.map((board) => board.id) });

export const boardTooLarge = (tree: BoardTree) => (compressed: boolean) =>
  new ResponseTooLarge(boardTooLargeDetail(compressed), {
    columns: tree.columns.map((column) => ({ id: column.id, title: column.title, cards: column.cards.length })),
  });

export const columnTooLarge = (column: ColumnWithCards) => (compressed: boolean) =>
  new ResponseTooLarge(columnTooLargeDetail(compressed), { card_ids: column.cards.map((card) => card.id) });
