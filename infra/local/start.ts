import { stopWhenOrphaned } from './orphan';
import { startLocalStack } from './stack';

/**
 * `npm start`: the service on the embedded local stack. PORT (default 3000) and DATA_DIR
 * (default .data/) are read here; data, users and tokens survive a restart on the same DATA_DIR.
 * Prints one JSON line with the URL and the pids once /health answers; SIGINT/SIGTERM, or the end
 * of the process that started it (npm's shell), stop every child.
 */
async function main() {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got ${process.env.PORT}`);
  const dataDir = process.env.DATA_DIR ?? '.data';
  // WebSockets on the next port (3001 by default); with PORT=0 both ports are picked free.
  const socketPort = Number(process.env.SOCKET_PORT ?? (port === 0 ? 0 : port + 1));
  if (!Number.isInteger(socketPort) || socketPort < 0 || socketPort > 65535) {
    throw new Error(`SOCKET_PORT must be a port number, got ${process.env.SOCKET_PORT}`);
  }
  // Locally every request gets its log line (on AWS successes are DEBUG: the access log has them).
  process.env.LOG_LEVEL ??= 'DEBUG';
  const sweepMs = Number(process.env.LOCAL_SWEEP_MS ?? 1000);
  const tokenSeconds = process.env.LOCAL_ACCESS_TOKEN_SECONDS ? Number(process.env.LOCAL_ACCESS_TOKEN_SECONDS) : undefined;
  if (tokenSeconds !== undefined && !(Number.isInteger(tokenSeconds) && tokenSeconds > 0)) {
    throw new Error(`LOCAL_ACCESS_TOKEN_SECONDS must be a positive whole number, got ${process.env.LOCAL_ACCESS_TOKEN_SECONDS}`);
  }
  const stack = await startLocalStack({
    port,
    dataDir,
    host: process.env.HOST,
    socketPort,
    sweepMs,
    accessTokenSeconds: tokenSeconds,
  });
  console.log(
    JSON.stringify({
      message: 'task-board is running',
      url: stack.url,
      socketUrl: stack.socketUrl,
      dataDir,
      pids: { server: process.pid, ...stack.pids },
    }),
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(JSON.stringify({ message: `stopping (${signal})` }));
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  stopWhenOrphaned((reason) => void shutdown(reason));
}

main().catch((error: NodeJS.ErrnoException & { address?: string; port?: number }) => {
  // A port taken is the usual reason; say which and how to choose another, not a stack trace.
  if (error.code === 'EADDRINUSE') {
    console.error(
      `task-board: ${error.address}:${error.port} is in use; start with PORT=<port> (and SOCKET_PORT=<port>, PORT+1 by default), or PORT=0 for free ones.`,
    );
  } else {
    console.error(error);
  }
  process.exit(1);
});
