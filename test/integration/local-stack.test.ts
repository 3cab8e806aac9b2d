import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/api';
import { startStackProcess, stopStackProcess } from '../support/local-process';
import { identify, isDead, waitUntilDead } from '../support/processes';

/**
 * `npm start` when its process dies without a chance to clean up (a crashed test run, kill -9):
 * its DynamoDB Local (Java) and Cognito emulator must not be left behind.
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
});
