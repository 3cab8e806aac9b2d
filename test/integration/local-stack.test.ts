import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/api';
import { startStackProcess, stopStackProcess } from '../support/local-process';
import { identify, isDead, waitUntilDead } from '../support/processes';

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

      process.kill(server.pid, 'SIGKILL');
      await waitUntilDead(server);
      for (const child of children) await waitUntilDead(child);
    } finally {
      await stopStackProcess(stack.child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('stops, emulators and all, when the npm of `npm start` is sent SIGTERM (npm signals its shell, which dies)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'task-board-npm-'));
    const running = await startStackProcess(dataDir, {}, 'npm');
    const npm = running.child;
    let server: ReturnType<typeof identify> | undefined;
    try {
      expect((await call('GET', '/health', { url: running.url })).status).toBe(200);
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
