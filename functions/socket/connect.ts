import { openConnection } from '../../lib/data/sockets';
import { BadRequest } from '../../lib/domain/errors';
import { socketRoute } from '../../lib/socket/chain';

/** The handshake succeeds only for an unused, unexpired ticket (401 otherwise). */
export const handler = socketRoute('socket.connect', async ({ connectionId, event }) => {
  const ticket = event.queryStringParameters?.ticket;
  if (!ticket || ticket.length > 128) throw new BadRequest('Connect with ?ticket=<ticket> from POST /realtime/tickets.');
  await openConnection(ticket, connectionId);
  return undefined;
});
