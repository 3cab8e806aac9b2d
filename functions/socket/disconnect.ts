import { closeConnection } from '../../lib/data/sockets';
import { socketDisconnect } from '../../lib/rows/socket';
import { socketRoute } from '../../lib/socket/chain';

/** Best effort (API Gateway does not promise `$disconnect`): TTLs and GoneException clean up the rest. */
export const handler = socketRoute(socketDisconnect, async ({ connectionId }) => {
  await closeConnection(connectionId);
  return undefined;
});
