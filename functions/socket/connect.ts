import { openConnection } from '../../lib/data/sockets';
import { Unauthorized } from '../../lib/domain/errors';
import { socketConnect } from '../../lib/rows/socket';
import { socketRoute } from '../../lib/socket/chain';

/** The handshake succeeds only for an unused, unexpired ticket (401 otherwise). */
export const handler = socketRoute(socketConnect, async ({ connectionId, event }) => {
  const ticket = event.queryStringParameters?.ticket;
  // Missing, unknown, used or expired: all the same 401 (realtime contract).
  if (!ticket || ticket.length > 128) throw new Unauthorized('Connect with ?ticket=<ticket> from POST /realtime/tickets.', false);
  await openConnection(ticket, connectionId);
  return undefined;
});
