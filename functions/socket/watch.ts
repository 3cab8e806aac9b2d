import { isExpired, readConnection, socketClosed, watchBoard } from '../../lib/data/sockets';
import { socketWatch } from '../../lib/rows/socket';
import { socketRoute } from '../../lib/socket/chain';

export const handler = socketRoute(socketWatch, async ({ connectionId, body }) => {
  const connection = await readConnection(connectionId);
  if (!connection) throw socketClosed();
  if (isExpired(connection)) return { type: 'token.expired' };
  const seq = await watchBoard(connection, body.board_id);
  return { type: 'watch.ack', board_id: body.board_id, seq };
});
