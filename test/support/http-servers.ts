import type { Server } from 'node:http';

/**
 * Stops test HTTP servers (webhook receivers): open connections first, since a receiver that
 * hangs on purpose would otherwise keep `close` waiting until its client gives up.
 */
export async function closeServers(servers: Iterable<Server>): Promise<void> {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
