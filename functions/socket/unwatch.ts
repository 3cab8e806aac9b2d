import { unwatchBoard } from '../../lib/data/sockets';
import { socketUnwatch } from '../../lib/rows/socket';
import { socketRoute } from '../../lib/socket/chain';

export const handler = socketRoute(socketUnwatch, async ({ connectionId, body }) => {
  await unwatchBoard(connectionId, body.board_id);
  return { type: 'unwatch.ack', board_id: body.board_id };
});
