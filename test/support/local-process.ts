import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { LONGEST_ROUTE_SECONDS } from '../../lib/runtime/aws-limits';

export interface RunningStack {
  child: ChildProcess;
  url: string;
  pids: { server: number; dynamodb: number; cognito: number };
}

/**
 * Starts `infra/local/start.ts` (what `npm start` runs) as a child, guarded by pdeathsig so it
 * cannot outlive the test run, and resolves once it prints its URL (its /health is then 200).
 * `via: 'npm'` runs `npm start` itself (npm, its shell, then the server): `child` is then npm,
 * and the server is `pids.server`.
 */
export function startStackProcess(
  dataDir: string,
  extraEnv: Record<string, string> = {},
  via: 'node' | 'npm' = 'node',
): Promise<RunningStack> {
  const args = ['--import', 'tsx', 'infra/local/start.ts'];
  const env = {
    ...process.env,
    PORT: '0',
    DATA_DIR: dataDir,
    NODE_NO_WARNINGS: '1',
    LOG_LEVEL: 'WARN',
    // A test's stack lives minutes: DynamoDB Local's optimizing compiler would cost more than it gives.
    DYNAMODB_COMPILER: 'client',
    // A request that waits its turn on a busy shared machine is not one Lambda would time out.
    LOCAL_FUNCTION_TIMEOUT_SECONDS: String(LONGEST_ROUTE_SECONDS),
    ...extraEnv,
  };
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  const child =
    via === 'npm'
      ? spawn('npm', ['start'], { env, stdio })
      : process.platform === 'linux' && existsSync('/usr/bin/setpriv')
        ? spawn('/usr/bin/setpriv', ['--pdeathsig', 'SIGTERM', '--', process.execPath, ...args], { env, stdio })
        : spawn(process.execPath, args, { env, stdio });
  return new Promise((resolve, reject) => {
    let output = '';
    // A hang guard: a cold DynamoDB Local (Java) on a busy shared machine is slow to answer.
    const timer = setTimeout(() => fail(new Error('local stack did not start within 240 s')), 240_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGTERM');
      reject(new Error(`${error.message}\n${output}`));
    };
    child.on('exit', (code) => fail(new Error(`local stack exited with ${code}`)));
    child.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-10_000);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-10_000);
      for (const line of chunk.toString().split('\n')) {
        if (!line.includes('"url"')) continue;
        const parsed = JSON.parse(line) as { url: string; pids: RunningStack['pids'] };
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, url: parsed.url, pids: parsed.pids });
      }
    });
  });
}

/** Stops the stack by its pid and waits until it (and so its emulators) has exited. */
export async function stopStackProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  await exited;
}
