import { startLocalStack } from './stack';

/**
 * `npm start`: the service on the embedded local stack. PORT (default 3000) and DATA_DIR
 * (default .data/) are read here; data, users and tokens survive a restart on the same DATA_DIR.
 * Prints one JSON line with the URL once /health answers; SIGINT/SIGTERM stop every child.
 */
async function main() {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got ${process.env.PORT}`);
  const dataDir = process.env.DATA_DIR ?? '.data';
  // Locally every request gets its log line (on AWS successes are DEBUG: the access log has them).
  process.env.LOG_LEVEL ??= 'DEBUG';
  const stack = await startLocalStack({ port, dataDir, host: process.env.HOST });
  console.log(JSON.stringify({ message: 'task-board is running', url: stack.url, dataDir, pids: stack.pids }));
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
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
