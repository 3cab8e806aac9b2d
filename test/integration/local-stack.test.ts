import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dynamoCompilerFrom, portsFrom } from '../../infra/local/start';
import { call } from '../support/api';
import { startStackProcess, stopStackProcess } from '../support/local-process';
import { identify, isDead, waitUntilDead } from '../support/processes';
import { runNode } from '../support/run-node';

/**
 * `npm start` when its process dies without a chance to clean up (a crashed test run, kill -9),
 * or when the npm that started it is stopped: its DynamoDB Local (Java) and Cognito emulator
 * must not be left behind.
 */
describe('local stack', () => {
  it('takes DynamoDB Local and the Cognito emulator down with it when it is killed with SIGKILL', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'task-board-crash-'));
    const stack = await startStackProcess(dataDir);
    try {
      expect((await call('GET', '/health', { url: stack.url })).status).toBe(200);
      const server = identify(stack.child.pid!);
      const children = [identify(stack.pids.dynamodb), identify(stack.pids.cognito)];
      expect(children.map(isDead)).toEqual([false, false]);
      // A test's stack: DynamoDB Local with the client compiler only (the tests' helper asks for it).
      expect(readFileSync(`/proc/${stack.pids.dynamodb}/cmdline`, 'utf8').split('\0')).toContain('-XX:TieredStopAtLevel=1');

      process.kill(server.pid, 'SIGKILL');
      await waitUntilDead(server);
      for (const child of children) await waitUntilDead(child);
    } finally {
      await stopStackProcess(stack.child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('on a port in use says which and how to pick another (exit 1), and leaves no emulator of its DATA_DIR running', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'task-board-busy-'));
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      const run = await runNode(['infra/local/start.ts'], {
        // The other ports free, so that the HTTP port is the one found taken.
        env: {
          ...process.env,
          NODE_NO_WARNINGS: '1',
          PORT: String(port),
          SOCKET_PORT: '0',
          DYNAMODB_PORT: '0',
          COGNITO_PORT: '0',
          DATA_DIR: dataDir,
        },
        // A hang guard: on a busy machine starting the emulators can take most of a minute.
        timeoutMs: 240_000,
      });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        `task-board: 127.0.0.1:${port} (PORT) is in use, perhaps by another npm start: stop it, or start with PORT=<port>. ` +
          'Defaults: PORT=3000, SOCKET_PORT=PORT+1, DYNAMODB_PORT=PORT+2, COGNITO_PORT=PORT+3; PORT=0 picks free ones for all ' +
          '(then run npm run sam:env -- local again after each start).',
      );
      // The emulators it started were given places inside the DATA_DIR: DynamoDB Local its
      // -dbPath, the Cognito emulator its working directory.
      const root = realpathSync(dataDir);
      const inside = (path: string) => path === root || path.startsWith(`${root}/`);
      const usingDataDir = readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(root) || inside(readlinkSync(`/proc/${pid}/cwd`));
          } catch {
            return false;
          }
        });
      expect(usingDataDir).toEqual([]);
    } finally {
      await new Promise((closed) => taken.close(closed));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('names the emulator port found taken (COGNITO_PORT here), before starting anything', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'task-board-busy-cognito-'));
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      const run = await runNode(['infra/local/start.ts'], {
        env: { ...process.env, NODE_NO_WARNINGS: '1', PORT: '0', COGNITO_PORT: String(port), DATA_DIR: dataDir },
        timeoutMs: 240_000,
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`task-board: 127.0.0.1:${port} (COGNITO_PORT) is in use`);
      expect(run.stderr).toContain('start with COGNITO_PORT=<port>');
      // Checked before either emulator started: neither left data.
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      await new Promise((closed) => taken.close(closed));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('gives npm start fixed ports by default, each overridable, PORT=0 free ones for all, and refuses a non-port', () => {
    expect(portsFrom({})).toEqual({ port: 3000, socketPort: 3001, dynamoPort: 3002, cognitoPort: 3003 });
    expect(portsFrom({ PORT: '4000', COGNITO_PORT: '9229' })).toEqual({
      port: 4000,
      socketPort: 4001,
      dynamoPort: 4002,
      cognitoPort: 9229,
    });
    expect(portsFrom({ PORT: '0' })).toEqual({ port: 0, socketPort: 0, dynamoPort: 0, cognitoPort: 0 });
    expect(() => portsFrom({ DYNAMODB_PORT: '80000' })).toThrow('DYNAMODB_PORT must be a port number, got 80000');
  });

  it("runs DynamoDB Local with the JVM's default compilers unless DYNAMODB_COMPILER says client, and refuses any other value", () => {
    expect(dynamoCompilerFrom({})).toBe('tiered');
    expect(dynamoCompilerFrom({ DYNAMODB_COMPILER: '' })).toBe('tiered');
    expect(dynamoCompilerFrom({ DYNAMODB_COMPILER: 'client' })).toBe('client');
    expect(() => dynamoCompilerFrom({ DYNAMODB_COMPILER: 'c2' })).toThrow('DYNAMODB_COMPILER must be tiered or client, got c2');
  });

  it('refuses a LOCAL_FUNCTION_TIMEOUT_SECONDS an HTTP API could not wait for (exit 1, the variable named), before starting anything', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'task-board-timeout-'));
    try {
      const run = await runNode(['infra/local/start.ts'], {
        env: { ...process.env, NODE_NO_WARNINGS: '1', PORT: '0', DATA_DIR: dataDir, LOCAL_FUNCTION_TIMEOUT_SECONDS: '45' },
        timeoutMs: 240_000,
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('LOCAL_FUNCTION_TIMEOUT_SECONDS must be a whole number of seconds from 1 to 29, got 45');
      // Checked first: no emulator was started, so none left its data.
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('stops, emulators and all, when the npm of `npm start` is sent SIGTERM (npm signals its shell, which dies)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'task-board-npm-'));
    // As a developer runs it: no DYNAMODB_COMPILER.
    const running = await startStackProcess(dataDir, { DYNAMODB_COMPILER: '' }, 'npm');
    const npm = running.child;
    let server: ReturnType<typeof identify> | undefined;
    try {
      expect((await call('GET', '/health', { url: running.url })).status).toBe(200);
      // DynamoDB Local with the JVM's default compilers.
      const java = readFileSync(`/proc/${running.pids.dynamodb}/cmdline`, 'utf8').split('\0');
      expect(java).toContain('-jar');
      expect(java.some((arg) => arg.startsWith('-XX:TieredStopAtLevel'))).toBe(false);
      server = identify(running.pids.server);
      const processes = [server, identify(running.pids.dynamodb), identify(running.pids.cognito)];
      process.kill(npm.pid!, 'SIGTERM');
      for (const stopped of processes) await waitUntilDead(stopped);
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      // Should this fail, the server (which stops its emulators) is stopped by its pid all the same.
      if (server && !isDead(server)) process.kill(server.pid, 'SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
