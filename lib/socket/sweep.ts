import { connectionsExpiringIn } from '../data/sockets';
import { expiryMinute } from '../data/table';
import { endExpiredSocket } from './fanout';

/** How far back the sweeper looks: a run missed for up to this long still closes its sockets. */
const LOOK_BACK_MINUTES = 10;

/**
 * Closes every socket whose token has expired by now: the connections listed in the expiry
 * buckets of the last minutes, each told `token.expired`, closed and forgotten. Run every minute
 * on AWS (a socket closes within a minute of its token), every second in the local stack.
 */
export async function sweepExpiredSockets(nowSeconds = Math.floor(Date.now() / 1000)): Promise<number> {
  const current = expiryMinute(nowSeconds);
  const minutes = Array.from({ length: LOOK_BACK_MINUTES + 1 }, (_, i) => current - i);
  const expired = (await connectionsExpiringIn(minutes)).filter((connection) => connection.expires_at <= nowSeconds);
  await Promise.all(expired.map((connection) => endExpiredSocket(connection.connection_id)));
  return expired.length;
}
