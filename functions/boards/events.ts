import { readEventPage } from '../../lib/data/event-log';
import { route } from '../../lib/http/route';
import { boardsEvents } from '../../lib/rows/boards';

export const handler = route(boardsEvents, async ({ scope, params }) => ({
  status: 200,
  body: await readEventPage(scope, params.after, params.limit),
}));
