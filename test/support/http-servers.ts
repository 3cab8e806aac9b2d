import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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

/**
 * A webhook receiver on 127.0.0.1 that answers 204 and keeps every JSON body it gets, in order;
 * `servers` collects it for `closeServers`.
 */
export async function startJsonReceiver(servers: Server[]): Promise<{ url: string; received: Record<string, any>[] }> {
  const received: Record<string, any>[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(204).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`, received };
}
