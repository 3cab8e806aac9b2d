import { issueTicket } from '../../lib/data/sockets';
import { heldCount } from '../../lib/http/rate-limit';
import { route } from '../../lib/http/route';
import { realtimeTickets } from '../../lib/rows/realtime';
import { ENV, requireEnv, secondsFromEnv } from '../../lib/runtime/config';

const socketUrl = requireEnv(ENV.socketUrl);
const ticketSeconds = secondsFromEnv(ENV.ticketSeconds, 60);

/**
 * A ticket never outlives the caller's token: the socket it opens closes when the token expires.
 * The rate limiter's count goes in the ticket's own transaction (no round trip before it).
 */
export const handler = route(realtimeTickets, async ({ caller }) => {
  // A personal token's ticket names it: its deletion closes the socket, its boards bound what it watches.
  const { ticket, expiresIn } = await issueTicket(caller.id, caller.expiresAt, ticketSeconds, heldCount(), caller.personal);
  return { status: 201, body: { ticket, url: socketUrl, expires_in: expiresIn } };
});
