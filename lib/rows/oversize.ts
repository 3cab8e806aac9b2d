import { boardsGet } from './boards';
import { cardsGet } from './cards';
import { columnsGet } from './columns';
import { routeKeyOf } from './row';

/**
 * What a client does when an answer is over what Lambda may send (6 MB, even compressed): the
 * board list names its boards, the board tree names its columns, a column names its cards, and a
 * card (at most 16,384 characters of description) always fits. Each step is one more request, so
 * what a member may write stays readable, up to a column of about 150,000 cards (or a list of
 * about 160,000 boards), whose ids would themselves pass 6 MB (docs/performance.md, "Large
 * answers"). The texts name the rows to read instead, so they live with the rows: the handlers'
 * errors (lib/http/oversize.ts) and the rows' own problem examples (lib/rows/text.ts) say the same.
 */
const howSent = (compressed: boolean) =>
  compressed ? ', even compressed' : ' (send Accept-Encoding: br or gzip to get it compressed)';

export const boardListTooLargeDetail = (compressed: boolean) =>
  `Your boards are too many to list in one answer${howSent(compressed)}. Read them one at a time: ${routeKeyOf(boardsGet)} for each id in "board_ids", newest first.`;

export const boardTooLargeDetail = (compressed: boolean) =>
  `This board is too large to read in one answer${howSent(compressed)}. Read it one column at a time: ${routeKeyOf(columnsGet)} for each column listed in "columns".`;

export const archiveTooLargeDetail = (compressed: boolean) =>
  `This board's archive is too large to list in one answer${howSent(compressed)}. Read its cards one at a time: ${routeKeyOf(cardsGet)} for each id in "card_ids", most recently archived first.`;

export const columnTooLargeDetail = (compressed: boolean) =>
  `This column is too large to read in one answer${howSent(compressed)}. Read its cards one at a time: ${routeKeyOf(cardsGet)} for each id in "card_ids", in column order.`;
