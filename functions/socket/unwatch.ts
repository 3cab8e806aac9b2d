import { unwatchBoard } from '../../lib/data/sockets';
import { socketRoute } from '../../lib/socket/chain';

export const handler = socketRoute('socket.unwatch', async ({ connectionId, body }) => {
  await unwatchBoard(connectionId, body.board_id);
  return { type: 'unwatch.ack', board_id: body.board_id };
});
