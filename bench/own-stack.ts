import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningStack, startStackProcess, stopStackProcess } from '../test/support/local-process';

/** A fresh directory for a local stack's data: DynamoDB Local keeps SQLite files, which on tmpfs cost no disk syncs. */
export const stackDataDir = (prefix: string) =>
  mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), `task-board-${prefix}-`));

/** Runs `work` on a local stack of its own (started with `env`), stopped and its data removed afterwards. */
export async function onOwnStack<T>(prefix: string, env: Record<string, string>, work: (stack: RunningStack) => Promise<T>) {
  const dataDir = stackDataDir(prefix);
  try {
    const stack = await startStackProcess(dataDir, env);
    try {
      return await work(stack);
    } finally {
      await stopStackProcess(stack.child);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
