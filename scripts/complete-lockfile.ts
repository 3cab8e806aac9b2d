import { readFileSync, writeFileSync } from 'node:fs';

/**
 * `npm run lockfile`: the registry these machines use serves only the linux-x64 builds of some
 * native packages (Biome, SWC, jest's resolver). npm then leaves the other platforms' optional
 * packages out of package-lock.json, and `npm ci` refuses the lockfile as out of sync. This adds
 * a plain entry for each missing optional dependency; npm skips them on other platforms (or, on
 * a registry that has them, fetches them as usual). Run it after every `npm install`.
 */
type Entry = { version?: string; dev?: boolean; optional?: boolean; optionalDependencies?: Record<string, string> };
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
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} missing optional platform packages added`);
