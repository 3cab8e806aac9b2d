import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where each stream reader of the local stack keeps its place: `DATA_DIR/stream-<row id>.json`,
 * an object of shard id → the sequence number of the last record it finished in that shard (the
 * reader goes on after it; a shard with no entry is read from now on, or, if it appeared after
 * the start, from its beginning). See infra/local/stream-poller.ts.
 */
type Checkpoints = Record<string, string>;

export const checkpointFile = (dataDir: string, readerId: string) => join(dataDir, `stream-${readerId}.json`);

/**
 * Readers whose work moved to another: old row id → the row id doing that work now. A DATA_DIR
 * from before the move still holds the old reader's checkpoint; migrateCheckpoints hands it on.
 */
export const MOVED_READERS: Readonly<Record<string, string>> = {
  // The account cleanup reader was merged into the cleanup reader of deleted boards and columns.
  'accounts.collect': 'children.collect',
  // The webhook fanout reader was merged into the change reader (live events and the fanout).
  'webhooks.fanout': 'events.broadcast',
};

/** Stream sequence numbers are decimal digit strings of any length: compared as big integers ("9" < "10"). */
const isSequence = (value: unknown): value is string => typeof value === 'string' && /^\d+$/.test(value);

const read = (file: string): Checkpoints => {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  return Object.fromEntries(Object.entries(parsed).filter(([, sequence]) => isSequence(sequence)));
};

/**
 * The earlier place of the two in each shard. A shard one side has no entry for is read by that
 * side from now on (later than any record), so the other's entry is the earlier one.
 */
function earliest(a: Checkpoints, b: Checkpoints): Checkpoints {
  const merged: Checkpoints = { ...a };
  for (const [shard, sequence] of Object.entries(b)) {
    const mine = merged[shard];
    if (mine === undefined || BigInt(sequence) < BigInt(mine)) merged[shard] = sequence;
  }
  return merged;
}

/**
 * Upgrading a DATA_DIR: for each reader of MOVED_READERS that is no longer a reader (`readers`:
 * the current row ids) and whose checkpoint file is still there, the reader that took its work
 * over starts from the earlier of the two places in each shard, so a record the old reader had
 * not finished (an account deletion interrupted by a stop) is read again by the new one. Records
 * the new reader had already done are run again; its handlers are idempotent (collectors delete
 * what is still there, broadcasts are at-least-once, as on AWS). The new place is written first
 * (to a temporary file renamed over it), the orphan removed after: a stop in between leaves both,
 * and the next start merges them again to the same result. Returns the old ids migrated.
 */
export function migrateCheckpoints(dataDir: string, readers: readonly string[]): string[] {
  const migrated: string[] = [];
  for (const [oldId, newId] of Object.entries(MOVED_READERS)) {
    const orphan = checkpointFile(dataDir, oldId);
    if (readers.includes(oldId) || !readers.includes(newId) || !existsSync(orphan)) continue;
    const target = checkpointFile(dataDir, newId);
    const merged = earliest(existsSync(target) ? read(target) : {}, read(orphan));
    writeFileSync(`${target}.tmp`, JSON.stringify(merged));
    renameSync(`${target}.tmp`, target);
    rmSync(orphan);
    migrated.push(oldId);
  }
  return migrated;
}
