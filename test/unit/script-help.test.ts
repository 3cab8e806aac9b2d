import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Every script package.json runs (`npm start`, `npm run bench`, scripts/*.ts) answers `--help`
 * with its usage and exit 0, and does nothing else: no stack started, no temporary folder left
 * behind, no file written. The scripts that take no arguments refuse any other one with exit 64,
 * again before doing anything. Each runs as npm runs it: `node --import tsx <file>`.
 */

const ROOT = resolve(__dirname, '../..');
const packageScripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;
/** npm script name → the file it runs with `node --import tsx`. */
const scripts = Object.entries(packageScripts).flatMap(([name, command]): [string, string][] => {
  const match = /^node --import tsx (\S+\.ts)$/.exec(command);
  return match ? [[name, match[1]!]] : [];
});
/** Those that take no argument at all (their settings, if any, are environment variables). */
const NO_ARGUMENTS = ['start', 'bench', 'openapi', 'asyncapi', 'events', 'lockfile'];

/** What the scripts write when they run: none of it may change under --help. */
const OUTPUTS = [
  'docs/openapi.json',
  'lib/rows/served.ts',
  'docs/asyncapi.json',
  'package-lock.json',
  'bench/results/latest.json',
  'bench/results/latest.md',
  'events',
  'cdk.out',
  '.data',
];
const SHARED_TEMP = existsSync('/dev/shm') ? '/dev/shm' : undefined;

function state() {
  const mtimes = Object.fromEntries(
    OUTPUTS.map((path) => {
      const full = join(ROOT, path);
      return [path, existsSync(full) ? statSync(full).mtimeMs : null];
    }),
  );
  // bench/run.ts keeps its DynamoDB Local data on tmpfs when there is one.
  const shm = SHARED_TEMP ? readdirSync(SHARED_TEMP).filter((name) => name.startsWith('task-board-bench-')) : [];
  return { mtimes, shm };
}

function run(file: string, args: string[], tmp: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    // TMPDIR and DATA_DIR point into a fresh folder, which must still be empty afterwards.
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, DATA_DIR: join(tmp, 'data') };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    // A script that ignored --help would go on working: stop it, and let the test fail on its code.
    // A hang guard sized for a busy CI machine (docs/ci.md), not a speed target: each takes 1-3 s.
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** What a script left in its TMPDIR, beside tsx's own compile cache (tsx-<uid>). */
const leftIn = (folder: string) => readdirSync(folder).filter((name) => !name.startsWith('tsx-'));

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'script-help-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

it('finds the scripts package.json runs', () => {
  expect(scripts.map(([name]) => name)).toEqual(expect.arrayContaining([...NO_ARGUMENTS, 'watch', 'smoke', 'sam:env']));
});

describe.each(scripts)('npm run %s (%s)', (name, file) => {
  it('answers --help with its usage, exit 0, and nothing else done', async () => {
    const before = state();
    const result = await run(file, ['--help'], tmp);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^usage: /);
    expect(result.stdout).toContain(name === 'start' ? 'npm start' : `npm run ${name}`);
    expect(leftIn(tmp)).toEqual([]);
    expect(state()).toEqual(before);
  });

  if (NO_ARGUMENTS.includes(name)) {
    it('refuses an argument it does not take with its usage and exit 64, before doing anything', async () => {
      const before = state();
      const result = await run(file, ['--bogus'], tmp);
      expect(result.code).toBe(64);
      expect(result.stderr).toContain('--bogus');
      expect(result.stderr).toContain('usage: ');
      expect(leftIn(tmp)).toEqual([]);
      expect(state()).toEqual(before);
    });
  }
});
