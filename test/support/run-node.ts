import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /**
   * Start the child in its own process group and, on timeout, kill the whole group (by the
   * child's pid): for commands that start children of their own, such as tsc's native compiler.
   */
  group?: boolean;
}

/**
 * Runs a command as a child (in the repository root unless told otherwise) and resolves when it
 * exits. On timeout the child, or its group, is killed by its own pid (nothing else) and the
 * promise rejects with what it had printed.
 */
export function runCommand(command: string, args: string[], options: RunOptions = {}): Promise<Finished> {
  const child = spawn(command, args, {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? { ...process.env, NODE_NO_WARNINGS: '1' },
    detached: options.group ?? false,
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
      if (child.pid !== undefined && child.exitCode === null) process.kill(options.group ? -child.pid : child.pid, 'SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
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

/** `node --import tsx <args>` in the repository root, as `npm run …` would run it. */
export function runNode(args: string[], options: Omit<RunOptions, 'cwd' | 'group'> = {}): Promise<Finished> {
  return runCommand(process.execPath, ['--import', 'tsx', ...args], options);
}
