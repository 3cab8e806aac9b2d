import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node --import tsx <args>` in the repository root as a child, as `npm run …` would, and
 * resolves when it exits. On timeout the child is killed by its own pid (nothing else) and the
 * promise rejects with what it had printed.
 */
export function runNode(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Finished> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: REPO_ROOT,
    env: options.env ?? { ...process.env, NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
      reject(new Error(`node ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
