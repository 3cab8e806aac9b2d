import { readFileSync } from 'node:fs';

/**
 * Liveness of processes the tests started, by pid, read from /proc (Linux). A pid alone can be
 * reused, so a process is identified by its pid and its start time.
 */
export interface ProcessIdentity {
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat field 22). */
  startTime: string;
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces: split after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

export function identify(pid: number): ProcessIdentity {
  const fields = statFields(pid);
  if (!fields) throw new Error(`process ${pid} is not running`);
  return { pid, startTime: fields[19]! };
}

/** Dead: no /proc entry, a zombie (State Z/X), or the pid now belongs to a later process. */
export function isDead({ pid, startTime }: ProcessIdentity): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return true;
  }
  const state = /^State:\s+(\S)/m.exec(status)?.[1];
  if (state === 'Z' || state === 'X') return true;
  return statFields(pid)?.[19] !== startTime;
}

export async function waitUntilDead(target: ProcessIdentity, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!isDead(target)) {
    if (Date.now() > deadline) throw new Error(`process ${target.pid} still alive after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
