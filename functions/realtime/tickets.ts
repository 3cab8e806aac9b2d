import { issueTicket } from '../../lib/data/sockets';
import { route } from '../../lib/http/route';
import { realtimeTickets } from '../../lib/rows/realtime';
import { ENV, requireEnv, secondsFromEnv } from '../../lib/runtime/config';

const socketUrl = requireEnv(ENV.socketUrl);
const ticketSeconds = secondsFromEnv(ENV.ticketSeconds, 60);

/** A ticket never outlives the caller's token: the socket it opens closes when the token expires. */
export const handler = route(realtimeTickets, async ({ caller }) => {
  const { ticket, expiresIn } = await issueTicket(caller.id, caller.expiresAt, ticketSeconds);
  return { status: 201, body: { ticket, url: socketUrl, expires_in: expiresIn } };
});
