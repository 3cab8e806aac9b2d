import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/**
 * Child processes of the local stack. On Linux each is started through `setpriv --pdeathsig`,
 * so the kernel stops it if this process dies in any way, SIGKILL included: no Java process
 * outlives a crashed test run. Normal shutdown stops each child by its pid and waits for it.
 */
const SETPRIV = '/usr/bin/setpriv';

export function spawnGuarded(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const guarded = process.platform === 'linux' && existsSync(SETPRIV);
  return guarded ? spawn(SETPRIV, ['--pdeathsig', 'SIGTERM', '--', command, ...args], options) : spawn(command, args, options);
}

export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Listens on `port` (0: a free one) at `host`, failing on the server's first error; the port it got. */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done());
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}

/** A port taken, with the variable that chooses it, for a message that says what to do. */
class PortInUse extends Error {
  readonly code = 'EADDRINUSE';
  constructor(
    readonly address: string,
    readonly port: number,
    readonly variable: string,
  ) {
    super(`${address}:${port} is in use (${variable})`);
  }
}

/**
 * Fails with PortInUse when `port` cannot be listened on at `host`: checked before an emulator
 * starts, so that a taken fixed port says which variable moves it instead of the emulator's own
 * startup failure. (Another process may still take it in between; the emulator then fails.)
 */
export function assertPortFree(port: number, host: string, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' || error.code === 'EACCES' ? new PortInUse(host, port, variable) : error),
    );
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve()));
  });
}

export async function waitFor(what: string, probe: () => Promise<boolean>, child: ChildProcess, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited during startup`);
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} was not ready within ${timeoutMs} ms`);
}

/** Keeps a child's output drained (a full pipe would block it) and available for diagnostics. */
export function captureOutput(child: ChildProcess, limit = 20_000): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-limit);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text;
}
