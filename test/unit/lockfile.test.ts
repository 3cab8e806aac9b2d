import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * package-lock.json pins a checksum for everything `npm ci` fetches, and tells npm which platform
 * each native build is for, so that a machine installs only its own (`npm run lockfile` completes
 * entries from the registry; scripts/complete-lockfile.ts says why npm leaves some bare).
 */
type Entry = {
  name?: string;
  version?: string;
  integrity?: string;
  inBundle?: boolean;
  link?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
};
const root = join(__dirname, '../..');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, Entry> };
const allowed = JSON.parse(readFileSync(join(root, 'scripts/lockfile-without-integrity.json'), 'utf8')) as Record<string, string>;
const entries = Object.entries(lock.packages).filter(([key, entry]) => key !== '' && !entry.link);
const nameOf = (key: string, entry: Entry) => entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
// A native build named for its platform: @biomejs/cli-darwin-arm64, @swc/core-win32-x64-msvc, …
const platformName = /(^|[-/])(aix|android|darwin|freebsd|linux|netbsd|openbsd|openharmony|sunos|win32)-[a-z0-9]+/;

describe('package-lock.json', () => {
  it('pins an integrity for every entry but the listed ones, each with its reason', () => {
    const without = entries.filter(([, entry]) => !entry.integrity).map(([key]) => key);
    expect(without.filter((key) => !allowed[key])).toEqual([]);
    // The list holds no entry that has an integrity after all, or that is gone.
    expect(Object.keys(allowed).filter((key) => !without.includes(key))).toEqual([]);
    for (const reason of Object.values(allowed)) expect(reason.length).toBeGreaterThan(20);
  });

  it('lists without integrity only bundled packages whose tarball is pinned, and local folders', () => {
    for (const key of Object.keys(allowed)) {
      const entry = lock.packages[key]!;
      if (entry.inBundle) {
        const parent = key.slice(0, key.lastIndexOf('/node_modules/'));
        expect({ key, parentIntegrity: lock.packages[parent]?.integrity?.startsWith('sha512-') }).toEqual({
          key,
          parentIntegrity: true,
        });
      } else {
        expect({ key, local: !key.includes('node_modules/') && existsSync(join(root, key, 'package.json')) }).toEqual({
          key,
          local: true,
        });
      }
    }
  });

  it('gives every platform build its os and cpu, so npm ci skips it elsewhere', () => {
    const bare = entries
      .filter(([key, entry]) => platformName.test(nameOf(key, entry)) && !(entry.os?.length && entry.cpu?.length))
      .map(([key]) => key);
    expect(bare).toEqual([]);
  });

  it('carries the os, cpu and libc that each installed package declares', () => {
    const differing = entries.flatMap(([key, entry]) => {
      const manifest = join(root, key, 'package.json');
      if (!key.startsWith('node_modules/') || !existsSync(manifest)) return [];
      const declared = JSON.parse(readFileSync(manifest, 'utf8')) as Entry;
      const fields = ['os', 'cpu', 'libc'] as const;
      const same = fields.every((field) => JSON.stringify(declared[field] ?? null) === JSON.stringify(entry[field] ?? null));
      return same ? [] : [{ key, lockfile: fields.map((f) => entry[f]), declared: fields.map((f) => declared[f]) }];
    });
    expect(differing).toEqual([]);
  });
});
