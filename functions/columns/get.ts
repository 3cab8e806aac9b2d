import { readColumnWithCards } from '../../lib/data/columns';
import { columnTooLarge } from '../../lib/http/oversize';
import { route } from '../../lib/http/route';
import { columnsGet } from '../../lib/rows/columns';

export const handler = route(columnsGet, async ({ scope }) => {
  const column = await readColumnWithCards(scope);
  // A column over 6 MB (compressed, when the client allows it) is read one card at a time.
  return { status: 200, body: column, oversize: columnTooLarge(column) };
});
