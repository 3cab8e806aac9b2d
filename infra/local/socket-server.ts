import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { Context } from 'aws-lambda';
import { WebSocket, WebSocketServer } from 'ws';
import { functionTimeoutSeconds, type SocketRouteRow, socketRoutes } from '../../lib/routes';
import { socketLimits } from '../../lib/runtime/aws-limits';
import type { SocketEvent, SocketResult } from '../../lib/socket/chain';
import { REPO_ROOT } from './http-adapter';
import { asFunction } from './iam';

type SocketHandler = (event: SocketEvent, context: Context) => Promise<SocketResult>;

interface LocalConnection {
  socket: WebSocket;
  connectedAt: number;
  lastActiveAt: number;
  sourceIp: string;
  userAgent: string;
  timers: NodeJS.Timeout[];
}

export interface LocalSocketServer {
  server: Server;
  /** Open sockets right now (for tests and the benchmark). */
  connectionCount(): number;
  close(): Promise<void>;
}

/**
 * API Gateway's WebSocket API on this machine, for the same handler modules Lambda runs: a
 * handshake on `/<stage>?ticket=…` runs the `$connect` row (a non-2xx answer refuses it with that
 * status), each text frame runs the row of its `action` (else `$default`) and the handler's body
 * goes back as the route response, and a close runs `$disconnect`. The connections API
 * (`POST`/`GET`/`DELETE /<stage>/@connections/<id>`, 410 GoneException for an unknown id) is
 * served on the same port, so the real `@aws-sdk/client-apigatewaymanagementapi` talks to it
 * unchanged through its endpoint. AWS's limits hold here too: 128 KB messages, 10 idle minutes,
 * 2 hours per connection.
 */
export async function createLocalSocketServer(stage: string): Promise<LocalSocketServer> {
  const gateway = new SocketGateway(stage, await importSocketRoutes());
  const server = createServer((req, res) => {
    gateway.manage(req, res).catch((error) => {
      console.error('local socket management error', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"message":"Internal server error"}');
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    gateway.upgrade(req, socket, head).catch((error) => {
      console.error('local socket handshake error', error);
      socket.end('HTTP/1.1 500 Internal Server Error\r\nconnection: close\r\n\r\n');
    });
  });
  return {
    server,
    connectionCount: () => gateway.connections.size,
    close: async () => {
      gateway.close();
      await new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
    },
  };
}

/** Each socket route's row and handler module, by route key. */
type SocketRoutes = Map<string, { row: SocketRouteRow; handler: SocketHandler }>;

async function importSocketRoutes(): Promise<SocketRoutes> {
  const routes: SocketRoutes = new Map();
  for (const row of Object.values(socketRoutes) as SocketRouteRow[]) {
    const module = (await import(join(REPO_ROOT, row.entry))) as { handler: SocketHandler };
    routes.set(row.routeKey, { row, handler: module.handler });
  }
  return routes;
}

/** The WebSocket API's gateway: its connections, the handshakes, frames and closes, and the connections API. */
class SocketGateway {
  readonly connections = new Map<string, LocalConnection>();
  private readonly sockets = new WebSocketServer({ noServer: true, maxPayload: socketLimits.messageBytes });

  constructor(
    private readonly stage: string,
    private readonly routes: SocketRoutes,
  ) {}

  /** A handshake: accepted once the `$connect` route answers 2xx, refused with its status otherwise. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    const url = new URL(req.url ?? '/', 'http://local');
    if (url.pathname !== `/${this.stage}` && url.pathname !== `/${this.stage}/`) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
      return;
    }
    // API Gateway's connection ids are 16 base64 characters: '/', '+' and '=' included, which
    // is why the connections API must be called with the id URL-encoded.
    const connectionId = randomBytes(12).toString('base64');
    const query = Object.fromEntries(url.searchParams.entries());
    const result = await this.invoke('$connect', connectionId, {
      eventType: 'CONNECT',
      queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v])),
      isBase64Encoded: false,
    });
    const status = result.statusCode ?? 200;
    if (status < 200 || status > 299) {
      socket.end(`HTTP/1.1 ${status} Refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    this.sockets.handleUpgrade(req, socket, head, (ws) => this.open(connectionId, ws, req));
  }

  /** An accepted socket: AWS's idle and lifetime limits, each frame routed, the close run as `$disconnect`. */
  private open(connectionId: string, ws: WebSocket, req: IncomingMessage) {
    const now = Date.now();
    const connection: LocalConnection = {
      socket: ws,
      connectedAt: now,
      lastActiveAt: now,
      sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
      userAgent: req.headers['user-agent'] ?? '',
      timers: [],
    };
    this.connections.set(connectionId, connection);
    const idle = () => setTimeout(() => ws.close(1001, 'Going away'), socketLimits.idleMs);
    connection.timers = [idle(), setTimeout(() => ws.close(1001, 'Going away'), socketLimits.connectionMs)];
    ws.on('message', (data, isBinary) => {
      connection.lastActiveAt = Date.now();
      clearTimeout(connection.timers[0]);
      connection.timers[0] = idle();
      const text = isBinary ? Buffer.from(data as Buffer).toString('base64') : data.toString();
      void this.message(connectionId, ws, text, isBinary);
    });
    // A frame over 128 KB (1009, as API Gateway closes it) or text that is not UTF-8 (1007):
    // ws closes this socket; unhandled, the error would end the whole local stack.
    ws.on('error', (error) => console.warn(`local socket ${connectionId} closed by the gateway: ${error.message}`));
    ws.on('close', (code) => {
      for (const timer of connection.timers) clearTimeout(timer);
      this.connections.delete(connectionId);
      this.invoke('$disconnect', connectionId, {
        eventType: 'DISCONNECT',
        requestContext: { disconnectStatusCode: code } as SocketEvent['requestContext'],
      }).catch((error) => console.error('local $disconnect failed', error));
    });
  }

  /** API Gateway's route selection: `$request.body.action`, else `$default`. */
  private async message(connectionId: string, ws: WebSocket, text: string, isBinary: boolean) {
    let routeKey = '$default';
    try {
      const action = (JSON.parse(text) as { action?: unknown }).action;
      if (typeof action === 'string' && !action.startsWith('$') && this.routes.has(action)) routeKey = action;
    } catch {
      // not JSON: $default
    }
    try {
      const result = await this.invoke(routeKey, connectionId, { eventType: 'MESSAGE', body: text, isBase64Encoded: isBinary });
      if (result.body !== undefined && ws.readyState === WebSocket.OPEN) ws.send(result.body);
    } catch (error) {
      console.error('local socket route failed', error);
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ message: 'Internal server error' }));
    }
  }

  /** Runs a route's handler with API Gateway's event and the function's own timeout. */
  private invoke(
    routeKey: string,
    connectionId: string,
    extra: Partial<SocketEvent> & { eventType: SocketEvent['requestContext']['eventType'] },
  ) {
    const { eventType, ...rest } = extra;
    const now = Date.now();
    const event: SocketEvent = {
      ...rest,
      requestContext: {
        routeKey,
        eventType,
        connectionId,
        domainName: 'localhost',
        stage: this.stage,
        requestId: randomUUID(),
        connectedAt: this.connections.get(connectionId)?.connectedAt ?? now,
        ...(rest.requestContext ?? {}),
      },
    };
    // The function's own timeout, as on AWS, so that a slow handler fails here as it would there.
    const { row, handler } = this.routes.get(routeKey)!;
    const deadline = now + functionTimeoutSeconds(row) * 1000;
    const context = {
      awsRequestId: randomUUID(),
      functionName: `local-${row.id}`,
      getRemainingTimeInMillis: () => deadline - Date.now(),
    } as unknown as Context;
    return asFunction(row, () => handler(event, context));
  }

  /** The connections API: POST sends, GET describes, DELETE closes; unknown ids are 410. */
  async manage(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://local');
    const prefix = `/${this.stage}/@connections/`;
    const raw = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : undefined;
    if (!raw || raw.includes('/')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
      return;
    }
    const connectionId = decodeURIComponent(raw);
    const connection = this.connections.get(connectionId);
    const body = await readAll(req);
    if (!connection || connection.socket.readyState !== WebSocket.OPEN) {
      res
        .writeHead(410, { 'content-type': 'application/json', 'x-amzn-errortype': 'GoneException' })
        .end(JSON.stringify({ message: `Connection ${connectionId} is gone` }));
      return;
    }
    manageConnection(req.method, connection, body, res);
  }

  /** Ends every socket at once (no close handshake) and stops accepting new ones. */
  close() {
    for (const connection of this.connections.values()) connection.socket.terminate();
    this.sockets.close();
  }
}

/** A call of the connections API on an open connection. */
function manageConnection(method: string | undefined, connection: LocalConnection, body: Buffer, res: ServerResponse) {
  if (method === 'POST') {
    if (body.length > socketLimits.messageBytes) {
      res
        .writeHead(413, { 'content-type': 'application/json', 'x-amzn-errortype': 'PayloadTooLargeException' })
        .end(JSON.stringify({ message: 'Message too long' }));
      return;
    }
    connection.socket.send(body.toString('utf8'));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  } else if (method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        ConnectedAt: new Date(connection.connectedAt).toISOString(),
        LastActiveAt: new Date(connection.lastActiveAt).toISOString(),
        Identity: { SourceIp: connection.sourceIp, UserAgent: connection.userAgent },
      }),
    );
  } else if (method === 'DELETE') {
    // API Gateway's DeleteConnection always closes with 1000: it has no way to send another code.
    connection.socket.close(1000);
    res.writeHead(204).end();
  } else {
    res.writeHead(405, { 'content-type': 'application/json' }).end('{"message":"Method Not Allowed"}');
  }
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
