import { isExpired, readConnection, watchBoard } from '../../lib/data/sockets';
import { Forbidden } from '../../lib/domain/errors';
import { socketRoute } from '../../lib/socket/chain';

export const handler = socketRoute('socket.watch', async ({ connectionId, body }) => {
  const connection = await readConnection(connectionId);
  if (!connection) throw new Forbidden('This socket is closed; reconnect with a new ticket.');
  if (isExpired(connection)) return { type: 'token.expired' };
  await watchBoard(connection, body.board_id);
  return { type: 'watch.ack', board_id: body.board_id };
});
