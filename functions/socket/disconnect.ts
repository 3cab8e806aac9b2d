import { closeConnection } from '../../lib/data/sockets';
import { socketRoute } from '../../lib/socket/chain';

/** Best effort (API Gateway does not promise `$disconnect`): TTLs and GoneException clean up the rest. */
export const handler = socketRoute('socket.disconnect', async ({ connectionId }) => {
  await closeConnection(connectionId);
  return undefined;
});
