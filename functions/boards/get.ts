import { readBoardTree } from '../../lib/data/boards';
import { ResponseTooLarge } from '../../lib/domain/errors';
import { route } from '../../lib/http/route';

export const handler = route('boards.get', async ({ scope }) => {
  const tree = await readBoardTree(scope);
  return {
    status: 200,
    body: tree,
    // A tree over 6 MB (compressed, when the client allows it) is read one column at a time.
    oversize: (compressed) =>
      new ResponseTooLarge(
        `This board is too large to read in one answer${compressed ? ', even compressed' : ' (send Accept-Encoding: br or gzip to get it compressed)'}. Read it one column at a time: GET /columns/{id} for each column listed in "columns".`,
        { columns: tree.columns.map((column) => ({ id: column.id, title: column.title, cards: column.cards.length })) },
      ),
  };
});
