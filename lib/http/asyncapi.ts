/**
 * The AsyncAPI document as served: docs/asyncapi.yaml names two servers by their shape (the AWS
 * stage with variables, the local stack on its default port); the deployment that serves it
 * knows its own socket address, so the server of that kind says exactly that address, as
 * `/openapi.json`'s `servers` say the origin it was asked on.
 */
interface Server {
  host: string;
  pathname?: string;
  protocol: string;
  variables?: unknown;
  [field: string]: unknown;
}

export function withSocketServer<T extends { servers: Record<string, Server> }>(document: T, socketUrl: string): T {
  const url = new URL(socketUrl);
  const name = url.protocol === 'wss:' ? 'production' : 'local';
  const { variables: _shapeOnly, ...server } = document.servers[name]!;
  return {
    ...document,
    servers: {
      ...document.servers,
      [name]: { ...server, host: url.host, pathname: url.pathname, protocol: url.protocol.slice(0, -1) },
    },
  };
}
