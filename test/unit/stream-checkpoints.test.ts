import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointFile, MOVED_READERS, migrateCheckpoints } from '../../infra/local/stream-checkpoints';
import { streamConsumers } from '../../lib/routes';

/**
 * The local stack's stream checkpoints across the merge of two readers into two others
 * (infra/local/stream-checkpoints.ts): a DATA_DIR from before the merge still holds
 * `stream-accounts.collect.json` and `stream-webhooks.fanout.json`; on start, the reader that
 * took each one's work over goes on from the earlier place in each shard (so an account deletion
 * the old reader had not finished is read again and completes), and the orphan is removed. Each
 * test has its own directory of files, as the stack reads and writes them.
 */
const readers = Object.keys(streamConsumers);
let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'task-board-checkpoints-'));
});

afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const write = (id: string, checkpoints: Record<string, string>) =>
  writeFileSync(checkpointFile(dataDir, id), JSON.stringify(checkpoints));
const read = (id: string) => JSON.parse(readFileSync(checkpointFile(dataDir, id), 'utf8'));

// Real DynamoDB Streams sequence numbers: 21 digits and more, where text order is not number order.
const EARLY = '9000000000000000000001';
const LATE = '10000000000000000000002';

describe('stream checkpoints of merged readers', () => {
  it('moves each old reader to the reader doing its work now, both of which are in the route table', () => {
    expect(MOVED_READERS).toEqual({ 'accounts.collect': 'children.collect', 'webhooks.fanout': 'events.broadcast' });
    for (const [oldId, newId] of Object.entries(MOVED_READERS)) {
      expect({ oldId, current: readers.includes(oldId) }).toEqual({ oldId, current: false });
      expect({ newId, current: readers.includes(newId) }).toEqual({ newId, current: true });
    }
  });

  it('makes the new reader re-read from an orphaned place earlier than its own (compared as numbers), and removes the orphan', () => {
    write('accounts.collect', { 'shard-1': EARLY });
    write('children.collect', { 'shard-1': LATE });
    expect(migrateCheckpoints(dataDir, readers)).toEqual(['accounts.collect']);
    expect(read('children.collect')).toEqual({ 'shard-1': EARLY });
    expect(existsSync(checkpointFile(dataDir, 'accounts.collect'))).toBe(false);
  });

  it('keeps the new reader’s own place where it is the earlier; takes the orphan’s for a shard only it has read', () => {
    write('webhooks.fanout', { 'shard-1': LATE, 'shard-2': '5' });
    write('events.broadcast', { 'shard-1': EARLY, 'shard-3': '7' });
    expect(migrateCheckpoints(dataDir, readers)).toEqual(['webhooks.fanout']);
    expect(read('events.broadcast')).toEqual({ 'shard-1': EARLY, 'shard-2': '5', 'shard-3': '7' });
    expect(existsSync(checkpointFile(dataDir, 'webhooks.fanout'))).toBe(false);
  });

  it('gives a new reader that has no file yet the orphan’s places', () => {
    write('accounts.collect', { 'shard-1': EARLY });
    write('webhooks.fanout', { 'shard-1': LATE });
    expect(migrateCheckpoints(dataDir, readers).sort()).toEqual(['accounts.collect', 'webhooks.fanout']);
    expect(read('children.collect')).toEqual({ 'shard-1': EARLY });
    expect(read('events.broadcast')).toEqual({ 'shard-1': LATE });
    expect(readdirSync(dataDir).sort()).toEqual(['stream-children.collect.json', 'stream-events.broadcast.json']);
  });

  it('leaves a current DATA_DIR as it is, and a second start after a migration changes nothing', () => {
    write('children.collect', { 'shard-1': LATE });
    expect(migrateCheckpoints(dataDir, readers)).toEqual([]);
    expect(read('children.collect')).toEqual({ 'shard-1': LATE });

    write('accounts.collect', { 'shard-1': EARLY });
    migrateCheckpoints(dataDir, readers);
    expect(migrateCheckpoints(dataDir, readers)).toEqual([]);
    expect(read('children.collect')).toEqual({ 'shard-1': EARLY });
  });

  it('merges again to the same places when a start stopped between writing the new place and removing the orphan', () => {
    // The state such a stop leaves: the new reader already at the merged place, the orphan still there.
    write('accounts.collect', { 'shard-1': EARLY });
    write('children.collect', { 'shard-1': EARLY, 'shard-2': LATE });
    expect(migrateCheckpoints(dataDir, readers)).toEqual(['accounts.collect']);
    expect(read('children.collect')).toEqual({ 'shard-1': EARLY, 'shard-2': LATE });
  });

  it('touches nothing for an old id that is still a reader', () => {
    write('accounts.collect', { 'shard-1': EARLY });
    write('children.collect', { 'shard-1': LATE });
    expect(migrateCheckpoints(dataDir, [...readers, 'accounts.collect'])).toEqual([]);
    expect(read('accounts.collect')).toEqual({ 'shard-1': EARLY });
    expect(read('children.collect')).toEqual({ 'shard-1': LATE });
  });
});
