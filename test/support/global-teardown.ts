import { rmSync } from 'node:fs';
import type { RunningStack } from './local-process';
import { stopStackProcess } from './local-process';

export default async function globalTeardown() {
  const stack = (globalThis as { taskBoardStack?: RunningStack }).taskBoardStack;
  if (stack) await stopStackProcess(stack.child);
  if (process.env.TASK_BOARD_DATA_DIR) rmSync(process.env.TASK_BOARD_DATA_DIR, { recursive: true, force: true });
}
