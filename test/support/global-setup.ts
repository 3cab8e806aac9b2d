import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStackProcess } from './local-process';

/** One local stack (one DynamoDB Local, one Cognito emulator) for the whole integration run. */
export default async function globalSetup() {
  const dataDir = mkdtempSync(join(tmpdir(), 'task-board-test-'));
  const stack = await startStackProcess(dataDir);
  process.env.TASK_BOARD_URL = stack.url;
  process.env.TASK_BOARD_DATA_DIR = dataDir;
  (globalThis as { taskBoardStack?: unknown }).taskBoardStack = stack;
}
