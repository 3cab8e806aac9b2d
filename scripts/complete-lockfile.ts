import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { answerArguments } from './cli';

/**
 * `npm run lockfile`, after every `npm install`. npm on these machines leaves some platforms'
 * optional packages (Biome, SWC, jest's resolver) out of package-lock.json, and `npm ci` then
 * refuses the lockfile as out of sync. This adds each missing optional dependency, and completes
 * every entry that has no `integrity` (those and any earlier bare ones) from the registry's own
 * metadata for that exact version (`npm view <name>@<version> dist os cpu libc license engines`,
 * one look-up per incomplete entry, none for complete ones):
 * - `integrity`: `npm ci` checks every tarball it fetches against it, so the lockfile pins the
 *   checksum of every executable CI runs;
 * - `os`, `cpu`, `libc` as the package declares them: `npm ci` installs a platform package only on
 *   its own platform (without them it installed every platform's Biome, SWC and resolver binaries:
 *   about 890 MB of node_modules on linux-x64).
 * No `resolved` is written: npm on these machines omits it for every registry package
 * (`omit-lockfile-registry-resolved`), fetching `<name>@<version>` from the configured registry.
 * Entries that cannot carry an integrity (bundled inside another tarball, local folders) are
 * listed with their reason in scripts/lockfile-without-integrity.json; test/unit/lockfile.test.ts
 * fails on any other entry that lacks an integrity or its platform fields.
 */
type Entry = {
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  inBundle?: boolean;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  license?: string;
  engines?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [field: string]: unknown;
};
type Metadata = {
  dist?: { integrity?: string };
  os?: string[];
  cpu?: string[];
  libc?: string[];
  license?: string;
  engines?: Record<string, string>;
};

const USAGE = `usage: npm run lockfile

Completes package-lock.json after an npm install: adds the optional platform packages npm left out,
and gives every registry entry without an integrity its integrity, os, cpu, libc, license and
engines from the registry (npm view <name>@<version>, one look-up per incomplete entry).
test/unit/lockfile.test.ts fails on an entry that still lacks them.

  -h, --help   this text`;
answerArguments(USAGE);

const file = 'package-lock.json';
const lock = JSON.parse(readFileSync(file, 'utf8')) as { packages: Record<string, Entry> };

let added = 0;
for (const entry of Object.values({ ...lock.packages })) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key]) continue;
    lock.packages[key] = { version, ...(entry.dev ? { dev: true } : {}), optional: true };
    added++;
  }
}

/** A package from the registry: under node_modules, not bundled in another, not a local folder. */
const fromRegistry = (key: string, entry: Entry) =>
  key.includes('node_modules/') && !entry.inBundle && !entry.link && !entry.resolved?.startsWith('file:');
const packageName = (key: string, entry: Entry) =>
  entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
const run = promisify(execFile);

async function metadata(name: string, version: string): Promise<Metadata> {
  const fields = ['dist', 'os', 'cpu', 'libc', 'license', 'engines'];
  const { stdout } = await run('npm', ['view', `${name}@${version}`, ...fields, '--json'], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout || '{}') as Metadata;
}

const incomplete = Object.entries(lock.packages).filter(([key, entry]) => fromRegistry(key, entry) && !entry.integrity);
const missing: string[] = [];
// Four look-ups at a time: a few dozen at most, after an install.
for (let i = 0; i < incomplete.length; i += 4) {
  await Promise.all(
    incomplete.slice(i, i + 4).map(async ([key, entry]) => {
      const name = packageName(key, entry);
      const meta = await metadata(name, entry.version!);
      if (!meta.dist?.integrity) {
        missing.push(`${name}@${entry.version}`);
        return;
      }
      const { version, dev, optional, ...rest } = entry;
      // npm's own order: version, integrity, then the fields alphabetically, engines last.
      const fields: Entry = {
        ...rest,
        ...(meta.cpu ? { cpu: meta.cpu } : {}),
        ...(dev ? { dev } : {}),
        ...(meta.libc ? { libc: meta.libc } : {}),
        ...(meta.license ? { license: meta.license } : {}),
        ...(optional ? { optional } : {}),
        ...(meta.os ? { os: meta.os } : {}),
        ...(meta.engines ? { engines: meta.engines } : {}),
      };
      lock.packages[key] = { version, integrity: meta.dist.integrity, ...fields };
    }),
  );
}

lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(
  `package-lock.json: ${added} missing optional packages added, ${incomplete.length - missing.length} entries completed from the registry`,
);
if (missing.length) {
  console.error(`the registry gives no integrity for: ${missing.join(', ')}`);
  process.exitCode = 1;
}
