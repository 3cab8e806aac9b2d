import { isExpired, readConnection, socketClosed, watchBoard } from '../../lib/data/sockets';
import { socketRoute } from '../../lib/socket/chain';

export const handler = socketRoute('socket.watch', async ({ connectionId, body }) => {
  const connection = await readConnection(connectionId);
  if (!connection) throw socketClosed();
  if (isExpired(connection)) return { type: 'token.expired' };
  await watchBoard(connection, body.board_id);
  return { type: 'watch.ack', board_id: body.board_id };
});
