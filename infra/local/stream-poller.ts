import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import type { StreamConsumerRow } from '../../lib/routes';
import { REPO_ROOT } from './http-adapter';
import { asFunction } from './iam';
import { nextTableWrite, tableWritesSignalled } from './table-writes';

type BatchHandler = (
  event: { Records: DynamoDBRecord[] },
  context: { awsRequestId: string; functionName: string },
) => Promise<{ batchItemFailures?: { itemIdentifier: string }[] } | undefined>;

/** Lambda's event filtering, for the pattern forms the service uses: value lists, `exists`, nesting. */
export function matchesFilter(pattern: object, value: unknown): boolean {
  for (const [key, rule] of Object.entries(pattern)) {
    const field = (value as Record<string, unknown> | undefined)?.[key];
    if (Array.isArray(rule)) {
      if (!rule.some((allowed) => matchesValue(allowed, field))) return false;
    } else if (rule && typeof rule === 'object') {
      if (field === undefined || field === null || !matchesFilter(rule, field)) return false;
    }
  }
  return true;
}

/** Lambda's FilterCriteria of several filters: a record is delivered when ANY of them matches it. */
export const matchesAnyFilter = (patterns: readonly object[], value: unknown) =>
  patterns.some((pattern) => matchesFilter(pattern, value));

function matchesValue(allowed: unknown, field: unknown): boolean {
  if (allowed && typeof allowed === 'object' && 'exists' in allowed)
    return (allowed as { exists: boolean }).exists === (field !== undefined);
  return allowed === field;
}

/**
 * The streams client deserialises an empty map attribute (`{"M": {}}`, e.g. a board's labels
 * before its first label) to `{}`, which no AttributeValue is; Lambda's event carries the JSON
 * as DynamoDB wrote it. Put the map back, at any depth, so the handler sees what Lambda gives it.
 */
function restoreEmptyMaps<T>(image: T): T {
  if (!image || typeof image !== 'object') return image;
  const fix = (value: unknown): unknown => {
    if (!value || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(fix);
    const entries = Object.entries(value);
    if (entries.length === 0) return { M: {} };
    const [[type, inner]] = entries as [[string, unknown]];
    if (type === 'M') return { M: Object.fromEntries(Object.entries(inner as object).map(([k, v]) => [k, fix(v)])) };
    if (type === 'L') return { L: (inner as unknown[]).map(fix) };
    return value;
  };
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, fix(value)])) as T;
}

/**
 * How long the poller waits after a read that found nothing (and no write was signalled during
 * it): from the first to the longest, doubling, unless a write of this process's functions comes
 * first (infra/local/table-writes.ts); after a read that found records, the first. The longest is
 * the pace of Lambda's event source, which polls a shard four times a second.
 */
const FIRST_IDLE_MS = 20;
const LONGEST_IDLE_MS = 250;
const SHARD_REFRESH_MS = 2_000;

export interface StreamPoller {
  stop(): Promise<void>;
}

/**
 * The table stream's Lambda trigger, which DynamoDB Local does not have: each shard is read with
 * GetRecords, the consumer row's filters are applied (a record passes when any matches), and the consumer's own handler is invoked
 * with a Lambda-shaped batch. A reported `batchItemFailures` entry makes the batch run again from
 * that record (with backoff, up to the row's retry count, like Lambda's event source mapping);
 * past it the rest of the batch is logged as dead-lettered. Like an event source mapping, it keeps
 * its place in each shard across restarts (`checkpointFile`), so a stack stopped mid-way goes on
 * from the first record it had not finished: a deletion interrupted by a crash still completes.
 * DynamoDB Local keeps a separate stream per access key and region, so the client uses the
 * handlers' own credentials and region.
 */
export async function startStreamPoller(
  tableName: string,
  row: StreamConsumerRow,
  checkpointFile: string,
): Promise<StreamPoller> {
  const { handler } = (await import(join(REPO_ROOT, row.entry))) as { handler: BatchHandler };
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  const streamArn = await latestStreamArn(tableName, endpoint);
  const poller = new ShardPoller(new DynamoDBStreamsClient({ endpoint }), streamArn, row, handler, checkpointFile);
  await poller.start();
  return { stop: () => poller.stop() };
}

async function latestStreamArn(tableName: string, endpoint: string | undefined): Promise<string> {
  const table = new DynamoDBClient({ endpoint });
  const description = await table.send(new DescribeTableCommand({ TableName: tableName }));
  table.destroy();
  const streamArn = description.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${tableName} has no stream`);
  return streamArn;
}

/** Reads every shard of one stream for one consumer row, from its checkpoints on, until stopped. */
class ShardPoller {
  private stopped = false;
  private loop?: Promise<void>;
  /** Each shard being read, with its next iterator (none once the shard is closed and read to its end). */
  private readonly iterators = new Map<string, string | undefined>();
  private readonly finished = new Set<string>();
  /** The last record handled in each shard, kept in the checkpoint file. */
  private readonly checkpoints: Record<string, string>;
  /** The checkpoint file, open from the first checkpoint to the stop, and the longest text written to it. */
  private checkpointFd?: number;
  private checkpointLength = 0;

  constructor(
    private readonly streams: DynamoDBStreamsClient,
    private readonly streamArn: string,
    private readonly row: StreamConsumerRow,
    private readonly handler: BatchHandler,
    private readonly checkpointFile: string,
  ) {
    this.checkpoints = existsSync(checkpointFile) ? JSON.parse(readFileSync(checkpointFile, 'utf8')) : {};
  }

  async start() {
    await this.refreshShards(true);
    this.loop = this.run();
  }

  async stop() {
    this.stopped = true;
    await this.loop;
    this.streams.destroy();
    if (this.checkpointFd !== undefined) closeSync(this.checkpointFd);
    this.checkpointFd = undefined;
  }

  private async run() {
    let lastRefresh = Date.now();
    let idleMs = 0;
    while (!this.stopped) {
      let seen = 0;
      let full = false;
      const writesBefore = tableWritesSignalled();
      try {
        if (Date.now() - lastRefresh > SHARD_REFRESH_MS) {
          lastRefresh = Date.now();
          await this.refreshShards(false);
        }
        // Every shard's read ends before the next round: one still running when another failed
        // would be read again from the same iterator, and its batch delivered twice.
        const reads = await Promise.allSettled([...this.iterators.keys()].map((shardId) => this.pollShard(shardId)));
        const counts = reads.map((read) => (read.status === 'fulfilled' ? read.value : 0));
        seen = counts.reduce((sum, n) => sum + n, 0);
        full = counts.some((n) => n >= this.row.batchSize);
        const failed = reads.find((read) => read.status === 'rejected');
        if (failed) throw failed.reason;
      } catch (error) {
        if (!this.stopped) console.error('local stream poller error', error);
      }
      // A full batch leaves records behind it, and a write signalled during the read may have put
      // records after it: read again at once. Otherwise the shard was read to its end, and the
      // next read waits for a write, or the idle pace.
      if (this.stopped || full || tableWritesSignalled() !== writesBefore) {
        idleMs = 0;
        continue;
      }
      idleMs = seen > 0 ? FIRST_IDLE_MS : Math.min(LONGEST_IDLE_MS, Math.max(FIRST_IDLE_MS, idleMs * 2));
      // Woken by a write: its records may land a moment after its answer, so read again soon.
      if (await nextTableWrite(idleMs)) idleMs = 0;
    }
  }

  /** Starts reading the shards not yet known. */
  private async refreshShards(initial: boolean) {
    let start: string | undefined;
    do {
      const out = await this.streams.send(new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: start }));
      for (const shard of out.StreamDescription?.Shards ?? []) {
        const id = shard.ShardId!;
        if (this.iterators.has(id) || this.finished.has(id)) continue;
        // Where it stopped before, else shards open at the first start: from now on; shards that
        // appear later: from their beginning.
        if (initial && !this.checkpoints[id] && shard.SequenceNumberRange?.EndingSequenceNumber) {
          this.finished.add(id);
          continue;
        }
        this.iterators.set(id, await this.iteratorAt(id, initial ? 'LATEST' : 'TRIM_HORIZON'));
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  }

  /** An iterator just after the shard's checkpoint, else at `type`. */
  private async iteratorAt(shardId: string, type: 'LATEST' | 'TRIM_HORIZON') {
    const after = this.checkpoints[shardId];
    if (after) {
      try {
        const out = await this.streams.send(
          new GetShardIteratorCommand({
            StreamArn: this.streamArn,
            ShardId: shardId,
            ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
            SequenceNumber: after,
          }),
        );
        return out.ShardIterator;
      } catch (error) {
        console.error(`local stream poller: no record after ${after} in ${shardId}; reading the shard from its start`, error);
        type = 'TRIM_HORIZON';
      }
    }
    const out = await this.streams.send(
      new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: type }),
    );
    return out.ShardIterator;
  }

  /** One GetRecords on the shard: the matching records delivered, the checkpoint moved; how many records came. */
  private async pollShard(shardId: string) {
    const iterator = this.iterators.get(shardId);
    if (!iterator) {
      this.iterators.delete(shardId);
      this.finished.add(shardId);
      return 0;
    }
    const out = await this.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: this.row.batchSize }));
    this.iterators.set(shardId, out.NextShardIterator);
    const records = (out.Records ?? [])
      .map((record) => toLambdaRecord(record, this.streamArn))
      .filter((record) => matchesAnyFilter(this.row.filters, record));
    if (records.length > 0) await deliver(this.row, this.handler, records);
    const last = out.Records?.at(-1)?.dynamodb?.SequenceNumber;
    if (last) this.checkpoint(shardId, last);
    return out.Records?.length ?? 0;
  }

  /**
   * Written over the file in place after each batch, padded with spaces (JSON allows them) to the
   * longest text it held, through a descriptor kept open: no open and close a batch, and never
   * truncated, so a stop at any moment leaves a whole checkpoint.
   */
  private checkpoint(shardId: string, sequence: string) {
    this.checkpoints[shardId] = sequence;
    if (this.checkpointFd === undefined) {
      const exists = existsSync(this.checkpointFile);
      this.checkpointFd = openSync(this.checkpointFile, exists ? 'r+' : 'w');
      if (exists) this.checkpointLength = fstatSync(this.checkpointFd).size;
    }
    const text = Buffer.from(JSON.stringify(this.checkpoints).padEnd(this.checkpointLength));
    this.checkpointLength = Math.max(this.checkpointLength, text.length);
    writeSync(this.checkpointFd, text, 0, text.length, 0);
  }
}

/**
 * Runs the consumer on a batch as the event source mapping does: again from the first failed
 * record, with backoff, up to the row's retry count; past it the rest is dead-lettered (logged).
 */
async function deliver(row: StreamConsumerRow, handler: BatchHandler, records: DynamoDBRecord[]) {
  let pending = records;
  for (let attempt = 0; pending.length > 0; attempt++) {
    let result: Awaited<ReturnType<BatchHandler>>;
    try {
      result = await asFunction(row, () =>
        handler({ Records: pending }, { awsRequestId: randomUUID(), functionName: `local-${row.id}` }),
      );
    } catch (error) {
      console.error('local stream consumer threw; retrying the whole batch', error);
      result = { batchItemFailures: [{ itemIdentifier: pending[0]!.dynamodb!.SequenceNumber! }] };
    }
    const failed = new Set((result?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
    if (failed.size === 0) return;
    const from = pending.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
    pending = pending.slice(Math.max(0, from));
    if (attempt >= row.retryAttempts) {
      console.error(`local stream consumer: ${pending.length} records dead-lettered after ${attempt + 1} attempts`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 50 * 2 ** attempt)));
  }
}

/** A stream record as Lambda's event carries it. */
function toLambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...record.dynamodb,
      NewImage: restoreEmptyMaps(record.dynamodb?.NewImage),
      OldImage: restoreEmptyMaps(record.dynamodb?.OldImage),
      ApproximateCreationDateTime: record.dynamodb?.ApproximateCreationDateTime
        ? Math.floor(record.dynamodb.ApproximateCreationDateTime.getTime() / 1000)
        : undefined,
    },
  } as DynamoDBRecord;
}
