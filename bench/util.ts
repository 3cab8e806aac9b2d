import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Shared helpers of the benchmark: statistics, bounded concurrency, process readings. */

export const REPO_ROOT = join(import.meta.dirname, '..');

/** Nearest-rank percentile of a sample (p in 0..100); NaN for an empty sample. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export const median = (values: number[]) => percentile(values, 50);
export const max = (values: number[]) => (values.length === 0 ? Number.NaN : Math.max(...values));
export const min = (values: number[]) => (values.length === 0 ? Number.NaN : Math.min(...values));

/** Runs `task` over `items` with at most `concurrency` in flight; results in input order. */
export async function pool<T, R>(items: T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

export const range = (n: number) => Array.from({ length: n }, (_, i) => i);

export const round = (value: number, digits = 2) =>
  Number.isFinite(value) ? Math.round(value * 10 ** digits) / 10 ** digits : value;

/** Resident and peak resident memory of a process, in MB, from /proc (Linux only). */
export function processMemory(pid: number | undefined): { rssMb: number; peakRssMb: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMb: round(kb('VmRSS') / 1024, 1), peakRssMb: round(kb('VmHWM') / 1024, 1) };
  } catch {
    return undefined;
  }
}

export function loadAverage(): number[] {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  } catch {
    return [];
  }
}

export const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** `PASS`/`FAIL` for a boolean, `n/a` when the figure could not be measured. */
export const verdict = (ok: boolean | undefined) => (ok === undefined ? 'n/a' : ok ? 'PASS' : 'FAIL');

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
  return value;
}
