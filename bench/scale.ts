import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  type AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  QueryCommand,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { columnPositionKey, type ItemKey, keys } from '../lib/data/table';
import { cardIdPrefixOf, cardIdSpace, newCardId } from '../lib/domain/card-ids';
import { seedViaBatch } from '../test/support/seed-via-batch';
import { type Client, RouteSample, type RouteSummary, type Stats, stats, type WireAnswer } from './client';
import { type BoardFixture, makeBoard } from './latency';
import { log, median, pool, processMemory, REPO_ROOT, range, round } from './util';

/**
 * Part 5: board size. Trees of a 500- and a 5,000-card board (1 KB descriptions) and their bytes
 * on the wire per encoding, deleting them and a 50,000-card board, and checking directly in
 * DynamoDB Local that nothing of a deleted board is left.
 */

export const DESCRIPTION_1K = 'The quick brown fox jumps over the lazy dog. '.repeat(23).slice(0, 1024);
const MIB = 1024 * 1024;

/**
 * 1,024 characters of prose for card `n`, as long as DESCRIPTION_1K (same items, same pages) but
 * as hard to compress as real text: words drawn from this repository's own documents (README.md
 * and docs/*.md) at their natural frequencies, a sentence every 8 to 19 words, the same text for
 * the same `n` in every run. DESCRIPTION_1K is one sentence repeated, which gzip takes to 3 %.
 */
export function proseDescriptions(): (n: number) => string {
  const docs = join(REPO_ROOT, 'docs');
  const text = [
    join(REPO_ROOT, 'README.md'),
    ...readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(docs, f)),
  ]
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  const words = text.match(/[A-Za-z][A-Za-z'-]*[a-z]/g) ?? [];
  if (words.length < 1000) throw new Error(`only ${words.length} words in the documents`);
  return (n) => {
    // mulberry32, seeded with the card's number
    let state = (n + 1) * 0x9e3779b9;
    const next = () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    let out = '';
    while (out.length < 1024) {
      const length = 8 + Math.floor(next() * 12);
      const sentence = range(length).map(() => words[Math.floor(next() * words.length)]!.toLowerCase());
      sentence[0] = sentence[0]!.charAt(0).toUpperCase() + sentence[0]!.slice(1);
      out += `${sentence.join(' ')}. `;
    }
    return out.slice(0, 1024);
  };
}

/** DynamoDB's item size: attribute names plus values (numbers approximated from their digits). */
export function itemBytes(item: Record<string, AttributeValue>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += Buffer.byteLength(name) + valueBytes(value);
  return total;
}

function valueBytes(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/[-.]|e.*$/gi, '').replace(/^0+/, '').length / 2) + 1;
  if (v.B !== undefined) return v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.M !== undefined) return 3 + Object.entries(v.M).reduce((s, [k, x]) => s + Buffer.byteLength(k) + valueBytes(x) + 1, 0);
  if (v.L !== undefined) return 3 + v.L.reduce((s, x) => s + valueBytes(x) + 1, 0);
  if (v.SS !== undefined) return v.SS.reduce((s, x) => s + Buffer.byteLength(x), 0);
  if (v.NS !== undefined) return v.NS.reduce((s, x) => s + x.length, 0);
  if (v.BS !== undefined) return v.BS.reduce((s, x) => s + x.length, 0);
  return 0;
}

/** Direct access to DynamoDB Local, with the endpoint the stack wrote to DATA_DIR/local-env.json. */
export class Table {
  readonly client: DynamoDBClient;
  readonly name: string;

  constructor(dataDir: string) {
    const env = JSON.parse(readFileSync(join(dataDir, 'local-env.json'), 'utf8')) as Record<string, string>;
    this.name = env.TABLE_NAME!;
    this.client = new DynamoDBClient({
      endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
      region: env.AWS_REGION ?? 'us-east-1',
      credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID ?? 'local', secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? 'local' },
    });
  }

  /** Items and bytes of a partition (or of a sort-key range of it), strongly consistent. */
  async partition(pk: string, between?: [string, string]): Promise<{ items: number; bytes: number }> {
    let items = 0;
    let bytes = 0;
    let startKey: Record<string, AttributeValue> | undefined;
    for (let page = 0; page < 10_000; page++) {
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.name,
          KeyConditionExpression: between ? 'pk = :pk AND sk BETWEEN :from AND :to' : 'pk = :pk',
          ExpressionAttributeValues: marshall(between ? { ':pk': pk, ':from': between[0], ':to': between[1] } : { ':pk': pk }),
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of out.Items ?? []) {
        items++;
        bytes += itemBytes(item);
      }
      startKey = out.LastEvaluatedKey;
      if (!startKey) break;
    }
    return { items, bytes };
  }

  /** The tree's query run straight against DynamoDB Local (no service, no unmarshalling): its time per page. */
  async timedQuery(pk: string, between: [string, string]): Promise<{ ms: number; pageMs: number[]; items: number }> {
    const started = performance.now();
    const pageMs: number[] = [];
    let items = 0;
    let startKey: Record<string, AttributeValue> | undefined;
    for (let page = 0; page < 10_000; page++) {
      const t = performance.now();
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.name,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: marshall({ ':pk': pk, ':from': between[0], ':to': between[1] }),
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      pageMs.push(round(performance.now() - t, 1));
      items += out.Count ?? 0;
      startKey = out.LastEvaluatedKey;
      if (!startKey) break;
    }
    return { ms: round(performance.now() - started, 1), pageMs, items };
  }

  /**
   * What-if for docs/performance.md: the same key range read as 17 ranges in parallel (the cards
   * in 16 equal parts of their ids' space after the board's prefix, then the columns), each paged
   * on its own.
   */
  async timedSegmentedQuery(pk: string): Promise<{ ms: number; pages: number; items: number }> {
    const space = cardIdSpace((await this.first(pk, '#BOARD'))?.card_id_prefix as string | undefined);
    const started = performance.now();
    const part = space.size / 16;
    const segments: [string, string][] = [
      ...range(16).map((i): [string, string] => [
        `${keys.cardPrefix}${space.idStartAt(i * part)}`,
        `${keys.cardPrefix}${space.idStartAt((i + 1) * part - 1)}\uffff`,
      ]),
      [keys.columnPrefix, `${keys.columnPrefix}\uffff`],
    ];
    const results = await Promise.all(segments.map((segment) => this.timedQuery(pk, segment)));
    return {
      ms: round(performance.now() - started, 1),
      pages: results.reduce((sum, r) => sum + r.pageMs.length, 0),
      items: results.reduce((sum, r) => sum + r.items, 0),
    };
  }

  /** The first item of a sort-key prefix in a partition, unmarshalled (to compare item shapes). */
  async first(pk: string, skPrefix: string): Promise<Record<string, unknown> | undefined> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.name,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: marshall({ ':pk': pk, ':prefix': skPrefix }),
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return out.Items?.[0] ? unmarshall(out.Items[0]) : undefined;
  }

  /**
   * Cards written straight into the table, as the service writes them (lib/data/cards.ts
   * createCard: the card under its board's card-id prefix with its `colpos` index key, and its
   * own id lookup only on a board without a prefix; positions 1.0, 2.0, ...
   * per column), and each column's card_version set as that many creates would have left it.
   * BatchWriteItem, 25 items a request, 8 requests in flight. No log items and no seq: the board
   * reads as one that had those cards all along (the broadcaster reads only log items' records).
   * Only for the huge board with BENCH_HUGE_SEED=direct (see `benchScale`).
   */
  async seedCards(board: BoardFixture, perColumn: number, description: string): Promise<string[]> {
    const writes: WriteRequest[] = [];
    const ids: string[] = [];
    const prefix = (await this.first(keys.boardPartition(board.id), '#BOARD'))?.card_id_prefix as string | undefined;
    for (const columnId of board.columns) {
      for (const i of range(perColumn)) {
        const id = newCardId(prefix);
        const position = i + 1;
        const card = {
          id,
          board_id: board.id,
          column_id: columnId,
          title: `Card ${i}`,
          description,
          position,
          created_at: new Date().toISOString(),
        };
        const item = {
          ...keys.card(board.id, id),
          type: 'card',
          ...card,
          colpos: columnPositionKey(columnId, position),
        };
        writes.push({ PutRequest: { Item: marshall(item) } });
        const ownLookup = keys.cardOwnLookup(id);
        if (ownLookup) writes.push({ PutRequest: { Item: marshall({ ...ownLookup, type: 'card_lookup', board_id: board.id }) } });
        ids.push(id);
      }
    }
    const chunks = range(Math.ceil(writes.length / 25)).map((i) => writes.slice(i * 25, i * 25 + 25));
    await pool(chunks, 8, async (chunk) => {
      let pending = chunk;
      for (let round = 0; pending.length > 0 && round < 20; round++) {
        const out = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.name]: pending } }));
        pending = out.UnprocessedItems?.[this.name] ?? [];
      }
      if (pending.length > 0) throw new Error('DynamoDB Local kept returning unprocessed items');
    });
    for (const columnId of board.columns) {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.name,
          Key: marshall(keys.columnLookup(columnId)),
          UpdateExpression: 'SET card_version = :v',
          ExpressionAttributeValues: marshall({ ':v': perColumn }),
        }),
      );
    }
    return ids;
  }

  /** Whether a partition still holds any item (one item asked for, strongly consistent). */
  async anyItem(pk: string): Promise<boolean> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.name,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': pk }),
        ConsistentRead: true,
        Limit: 1,
        ProjectionExpression: 'pk',
      }),
    );
    return (out.Count ?? 0) > 0;
  }

  /** How many of these keys still have an item. */
  async countExisting(keyList: ItemKey[]): Promise<number> {
    let found = 0;
    for (let i = 0; i < keyList.length; i += 100) {
      let pending: Record<string, AttributeValue>[] = keyList.slice(i, i + 100).map((k) => marshall(k));
      for (let round = 0; pending.length > 0 && round < 20; round++) {
        const out = await this.client.send(
          new BatchGetItemCommand({ RequestItems: { [this.name]: { Keys: pending, ConsistentRead: true } } }),
        );
        found += out.Responses?.[this.name]?.length ?? 0;
        pending = out.UnprocessedKeys?.[this.name]?.Keys ?? [];
      }
      if (pending.length > 0) throw new Error('DynamoDB Local kept returning unprocessed keys');
    }
    return found;
  }
}

export interface TreeRun {
  cards: number;
  columns: number;
  partition: { items: number; bytes: number; mib: number; expectedPages: number };
  summary: RouteSummary;
  pages: number;
  /** The same query sent by the bench straight to DynamoDB Local: median of 3, with each page's time. */
  emulatorQuery: { ms: number; pageMs: number[]; items: number };
  /** The same range as 17 parallel queries (16 equal parts of the card ids' space, then the columns): median of 3. */
  emulatorSegmentedQuery: { ms: number; pages: number; items: number };
  wallMs: Stats;
  serverMs: Stats;
  ownMs: Stats;
  /** The JSON's size (fetch decodes the answer before it is counted). */
  responseBytes: number;
  /** What the timed requests asked for (fetch's default on http: URLs) and what came back. */
  timedWith: { acceptEncoding: string; contentEncoding: string };
}

/** `Accept-Encoding` of the timed tree requests: what undici's fetch sends to an http: URL. */
const FETCH_ACCEPT_ENCODING = 'gzip, deflate';

/** One tree, one `Accept-Encoding`: the body as it came over the socket, and the times. */
export interface WireEncodingRun {
  /** The header sent; `none` for a request without `Accept-Encoding` (identity). */
  acceptEncoding: 'none' | 'gzip' | 'br';
  status: number;
  /** `content-encoding` of the answer, `identity` when it had none. */
  contentEncoding: string;
  /** Body bytes as received, not decoded (median of the runs; min and max beside it). */
  wireBytes: number;
  wireBytesRange: [number, number];
  /**
   * The `content-length` headers against the bytes counted: `none` when the answers had none (the
   * local adapter writes its head before the body, so Node sends it chunked; the bytes counted are
   * the body without the chunk framing, what API Gateway's Content-Length would say).
   */
  contentLength: 'equal' | 'differs' | 'none';
  /** wireBytes ÷ the tree's JSON. */
  ratio: number;
  wallMs: Stats;
  serverMs: Stats;
  ownMs: Stats;
}

export interface WireRun {
  cards: number;
  /** The bench's repeated sentence (the timed trees) or prose (`proseDescriptions`). */
  descriptions: 'repeated sentence' | 'prose';
  /** The tree's JSON, decoded from the compressed answers (the identity answer's body when that is 200). */
  jsonBytes: number;
  encodings: WireEncodingRun[];
}

export interface DeleteRun {
  cards: number;
  wallMs: number;
  serverMs: number;
  /** Of serverMs, waiting on DynamoDB (a collector already at work on the board slows DynamoDB Local for everyone). */
  dynamoMs: number;
  calls: number;
  sequential: number;
  commands: Record<string, number>;
  left: { partitionItems: number; lookupsAndMirrors: number; cardsAnswering404: number; cardsChecked: number };
  nothingLeft: boolean;
  /**
   * From sending the DELETE until the partition and the lookups were found empty: the request
   * removes the board item (and the memberships), the table stream's `children.collect` consumer
   * the rest after the answer. Polled every `pollMs`, so up to that much late; NaN when the
   * partition was not empty after `capMs`.
   */
  goneMs: number;
  pollMs: number;
  capMs: number;
  /** Waited before the DELETE for the stream consumers to finish earlier records (see `streamSettled`). */
  streamWaitMs: number;
  /** The board's items before the DELETE: its partition (counted) and the lookups and mirror outside it. */
  itemsBefore: number;
  /** itemsBefore ÷ goneMs: what the request and the collector removed per second. */
  itemsPerSecond: number;
}

/**
 * How the large board is seeded: `http` by single creates, as the small one (BENCH_SEED=http);
 * `batch` through POST /boards/{id}/batch. `direct` (BatchWriteItem straight into the table) is
 * in the results of runs from before the boards were seeded through the batch route.
 */
export type SeedMode = 'http' | 'batch' | 'direct';

/** How the huge board is seeded: through POST /boards/{id}/batch, or BatchWriteItem straight into the table. */
export type HugeSeedMode = Exclude<SeedMode, 'http'>;

export interface ScaleReport {
  seeding: {
    http: { cards: number; seconds: number; cardsPerSecond: number; writers: number; createMs: Stats };
    large: { mode: SeedMode; cards: number; seconds: number; cardsPerSecond: number };
    /**
     * The board only deleted (BENCH_HUGE_BOARD, BENCH_SKIP=huge leaves it out), seeded through the
     * batch route or, with BENCH_HUGE_SEED=direct, straight into the table (runs from before the
     * choice have no `mode`: theirs were `direct`); then the stream consumers' wait for the
     * seed's records, before its DELETE.
     */
    huge?: { mode?: HugeSeedMode; cards: number; seconds: number; cardsPerSecond: number; streamDrainSeconds: number };
  };
  trees: TreeRun[];
  treeRatio: number;
  /** The trees' bytes on the wire without `Accept-Encoding`, with `gzip` and with `br`. */
  wire: WireRun[];
  /** The large board, the small one, then the huge one when it ran. */
  deletes: DeleteRun[];
  memory: { beforeTrees?: ReturnType<typeof processMemory>; afterTrees?: ReturnType<typeof processMemory> };
}

const countCommands = (commands: string) => {
  const counts: Record<string, number> = {};
  for (const c of commands.split(',').filter(Boolean)) counts[c] = (counts[c] ?? 0) + 1;
  return counts;
};

/**
 * Trees of several boards, measured in alternation (small, large, small, large, ...) so that a busy
 * moment of this shared machine weighs on every board alike; the same for the bare DynamoDB Local
 * query of each board's range.
 */
async function treeRuns(client: Client, table: Table, token: string, boards: BoardFixture[], runs: number): Promise<TreeRun[]> {
  const skRange: [string, string] = [keys.cardPrefix, `${keys.columnPrefix}\uffff`];
  const partitions: { items: number; bytes: number }[] = [];
  for (const board of boards) partitions.push(await table.partition(keys.boardPartition(board.id), skRange));
  const samples = boards.map((board) => new RouteSample(`boards.get (${board.cards.length} cards)`, 200));
  const emulator: { ms: number; pageMs: number[]; items: number }[][] = boards.map(() => []);
  const segmented: { ms: number; pages: number; items: number }[][] = boards.map(() => []);
  for (const board of boards) await client.send('GET', `/boards/${board.id}`, { token }); // warm
  for (const _ of range(runs)) {
    for (const [i, board] of boards.entries()) samples[i]!.add(await client.send('GET', `/boards/${board.id}`, { token }));
  }
  for (const _ of range(3)) {
    for (const [i, board] of boards.entries()) {
      emulator[i]!.push(await table.timedQuery(keys.boardPartition(board.id), skRange));
      segmented[i]!.push(await table.timedSegmentedQuery(keys.boardPartition(board.id)));
    }
  }
  return boards.map((board, i) => {
    const sample = samples[i]!;
    const tree = sample.answers[0]?.body as { columns?: { cards: unknown[] }[] } | undefined;
    const cardsInTree = tree?.columns?.reduce((sum, c) => sum + c.cards.length, 0);
    if (cardsInTree !== board.cards.length) throw new Error(`tree has ${cardsInTree} cards, expected ${board.cards.length}`);
    const summary = sample.summary();
    const traces = sample.answers.map((a) => a.trace!);
    const partition = partitions[i]!;
    const whatIf = segmented[i]!.sort((a, b) => a.ms - b.ms)[1]!;
    if (whatIf.items !== partition.items)
      throw new Error(`segmented query read ${whatIf.items} items, the range has ${partition.items}`);
    return {
      cards: board.cards.length,
      columns: board.columns.length,
      partition: {
        ...partition,
        mib: round(partition.bytes / MIB, 2),
        expectedPages: Math.max(1, Math.ceil(partition.bytes / MIB)),
      },
      summary,
      pages: Math.max(...traces.map((t) => countCommands(t.commands).Query ?? 0)),
      emulatorQuery: emulator[i]!.sort((a, b) => a.ms - b.ms)[1]!,
      emulatorSegmentedQuery: whatIf,
      wallMs: summary.wallMs,
      serverMs: summary.totalMs,
      ownMs: summary.ownMs,
      responseBytes: summary.responseBytes,
      timedWith: {
        acceptEncoding: FETCH_ACCEPT_ENCODING,
        contentEncoding: [...new Set(sample.answers.map((a) => a.contentEncoding ?? 'identity'))].join(', '),
      },
    };
  });
}

/**
 * The trees' bytes on the wire, read with node:http (which decodes nothing): without
 * `Accept-Encoding`, with `gzip` and with `br`, each tree `runs` times, the boards and encodings
 * in alternation like the timed trees. Content-Length is checked against the bytes counted; the
 * JSON's size comes from decoding each compressed answer after it was counted.
 */
async function wireRuns(
  client: Client,
  token: string,
  boards: (BoardFixture & { descriptions: WireRun['descriptions'] })[],
  runs: number,
): Promise<WireRun[]> {
  const encodings = ['none', 'gzip', 'br'] as const;
  const answers = boards.map(() => encodings.map((): WireAnswer[] => []));
  for (const _ of range(runs)) {
    for (const [b, board] of boards.entries()) {
      for (const [e, encoding] of encodings.entries()) {
        answers[b]![e]!.push(await client.wire(`/boards/${board.id}`, token, encoding === 'none' ? undefined : encoding));
      }
    }
  }
  return boards.map((board, b) => {
    const jsonSizes = new Set<number>();
    const perEncoding = encodings.map((encoding, e): Omit<WireEncodingRun, 'ratio'> => {
      const list = answers[b]![e]!;
      const status = median(list.map((a) => a.status));
      const contentEncoding = [...new Set(list.map((a) => a.contentEncoding ?? 'identity'))].join(', ');
      if (encoding !== 'none' && status === 200 && contentEncoding !== encoding)
        throw new Error(`tree of ${board.cards.length} cards asked for ${encoding}, answered ${contentEncoding}`);
      for (const [k, a] of list.entries()) {
        if (a.status !== 200) continue;
        const json =
          a.contentEncoding === 'gzip' ? gunzipSync(a.body) : a.contentEncoding === 'br' ? brotliDecompressSync(a.body) : a.body;
        jsonSizes.add(json.length);
        if (k === 0) {
          const tree = JSON.parse(json.toString('utf8')) as { columns: { cards: unknown[] }[] };
          const cards = tree.columns.reduce((sum, c) => sum + c.cards.length, 0);
          if (cards !== board.cards.length) throw new Error(`tree has ${cards} cards, expected ${board.cards.length}`);
        }
      }
      const sizes = list.map((a) => a.wireBytes);
      const traces = list.map((a) => a.trace).filter((t) => t !== undefined);
      return {
        acceptEncoding: encoding,
        status,
        contentEncoding,
        wireBytes: median(sizes),
        wireBytesRange: [Math.min(...sizes), Math.max(...sizes)],
        contentLength: list.every((a) => Number.isNaN(a.contentLength))
          ? 'none'
          : list.every((a) => a.contentLength === a.wireBytes)
            ? 'equal'
            : 'differs',
        wallMs: stats(list.map((a) => a.wallMs)),
        serverMs: stats(traces.map((t) => t.totalMs)),
        ownMs: stats(traces.map((t) => t.ownMs)),
      };
    });
    if (jsonSizes.size !== 1)
      throw new Error(`tree of ${board.cards.length} cards decoded to ${[...jsonSizes].join(', ')} bytes`);
    const jsonBytes = [...jsonSizes][0]!;
    return {
      cards: board.cards.length,
      descriptions: board.descriptions,
      jsonBytes,
      encodings: perEncoding.map((run) => ({ ...run, ratio: round(run.wireBytes / jsonBytes, 3) })),
    };
  });
}

/**
 * Waits until the local stack's stream consumers have read every record written so far: each
 * poller rewrites its checkpoint file (`DATA_DIR/stream-<consumer>.json`) after every GetRecords
 * that returned records, and leaves it alone when idle, so all of them unchanged for `quietMs`
 * means the backlog is read. Bulk writes leave a backlog (the collector's poller reads 10 records
 * a call, its batch size), and a DELETE sent behind it would time the backlog, not the deletion.
 * Waits at least `quietMs`; returns how long the consumers were still reading, counted to their
 * last checkpoint write (0 when they were idle already; NaN after `capMs`).
 */
async function streamSettled(dataDir: string, quietMs = 2_000, capMs = 600_000): Promise<number> {
  const started = Date.now();
  const files = readdirSync(dataDir).filter((name) => /^stream-.+\.json$/.test(name));
  if (files.length === 0) throw new Error(`no stream checkpoint files in ${dataDir}`);
  while (Date.now() - started < capMs) {
    const lastWrite = Math.max(...files.map((name) => statSync(join(dataDir, name)).mtimeMs));
    // Quiet for `quietMs` as watched from here, so that the wait is never shorter than that.
    if (Date.now() - Math.max(lastWrite, started) >= quietMs) return Math.max(0, lastWrite - started);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Number.NaN;
}

async function deleteRun(
  client: Client,
  table: Table,
  dataDir: string,
  owner: { token: string; userId: string },
  board: BoardFixture,
  { pollMs, capMs }: { pollMs: number; capMs: number },
): Promise<DeleteRun> {
  const pk = keys.boardPartition(board.id);
  const lookups = [
    ...board.cards.flatMap((id) => keys.cardOwnLookup(id) ?? []),
    ...[...new Set(board.cards.flatMap((id) => cardIdPrefixOf(id) ?? []))].map(keys.cardIds),
    ...board.columns.map(keys.columnLookup),
    keys.userBoard(owner.userId, board.id),
  ];
  // Counted before the wait, which then leaves DynamoDB Local at least two quiet seconds after
  // reading the whole partition (60 MB for 50,000 cards): a DELETE sent right after took 0.84 s once.
  const itemsBefore = (await table.partition(pk)).items + lookups.length;
  const streamWaitMs = await streamSettled(dataDir);
  if (Number.isNaN(streamWaitMs)) throw new Error('the stream consumers did not catch up within 10 minutes');
  const sent = performance.now();
  const answer = await client.send('DELETE', `/boards/${board.id}`, { token: owner.token });
  if (answer.status !== 204) throw new Error(`DELETE /boards/${board.id}: ${answer.status} ${JSON.stringify(answer.body)}`);
  const checked = [0, 1, 2, 3, 4].map((i) => board.cards[Math.floor((i * board.cards.length) / 5)]!);
  let answering404 = 0;
  for (const id of checked) if ((await client.send('GET', `/cards/${id}`, { token: owner.token })).status === 404) answering404++;
  // The rest goes after the answer (the stream's collector): wait until the partition is empty
  // (one item asked for, strongly consistent, every `pollMs`), then count it and check the
  // lookups, for up to `capMs`.
  let partitionItems = Number.NaN;
  let outside = Number.NaN;
  let goneMs = Number.NaN;
  const deadline = sent + capMs;
  while (performance.now() < deadline) {
    if (await table.anyItem(pk)) {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      continue;
    }
    const emptyAt = performance.now();
    partitionItems = (await table.partition(pk)).items;
    outside = await table.countExisting(lookups);
    if (partitionItems === 0 && outside === 0) {
      goneMs = emptyAt - sent;
      break;
    }
  }
  if (Number.isNaN(goneMs)) {
    partitionItems = (await table.partition(pk)).items;
    outside = await table.countExisting(lookups);
  }
  return {
    cards: board.cards.length,
    wallMs: round(answer.wallMs, 1),
    serverMs: round(answer.trace?.totalMs ?? Number.NaN, 1),
    dynamoMs: round(answer.trace?.dynamoMs ?? Number.NaN, 1),
    calls: answer.trace?.calls ?? Number.NaN,
    sequential: answer.trace?.sequential ?? Number.NaN,
    commands: countCommands(answer.trace?.commands ?? ''),
    left: { partitionItems, lookupsAndMirrors: outside, cardsAnswering404: answering404, cardsChecked: checked.length },
    nothingLeft: partitionItems === 0 && outside === 0 && answering404 === checked.length,
    goneMs: round(goneMs, 0),
    pollMs,
    capMs,
    streamWaitMs: round(streamWaitMs, 0),
    itemsBefore,
    itemsPerSecond: round(itemsBefore / (goneMs / 1000), 0),
  };
}

/**
 * A board of `cards` cards in `columns` columns (`Card 0`, `Card 1`, ... in each; `description`
 * of the n-th card column after column): board and columns by their single routes, cards through
 * POST /boards/{id}/batch (test/support/seed-via-batch.ts), so the board is what the service
 * writes, log items and `seq` included.
 */
export async function seedBoard(
  client: Client,
  owner: { token: string },
  columns: number,
  cards: number,
  description: string | ((n: number) => string) = DESCRIPTION_1K,
): Promise<BoardFixture> {
  const board = await makeBoard(client, owner.token, columns, 0, DESCRIPTION_1K);
  const perColumn = Math.ceil(cards / columns);
  let n = 0;
  const ids = await seedViaBatch(
    (body) => client.send('POST', `/boards/${board.id}/batch`, { token: owner.token, body }),
    board.columns.map((id) => ({
      id,
      cards: range(perColumn).map((i) => ({
        title: `Card ${i}`,
        description: typeof description === 'string' ? description : description(n++),
      })),
    })),
  );
  board.cards = ids.flat().map((card) => card.id);
  return board;
}

/** An item's attribute names, sorted: cards written straight into the table must have the service's. */
const itemShape = (item: Record<string, unknown> | undefined) =>
  Object.keys(item ?? {})
    .sort()
    .join(',');

const describeDelete = (d: DeleteRun) =>
  `${d.cards} cards answered in ${d.wallMs} ms, all gone after ${d.goneMs} ms (${d.itemsPerSecond} items/s), nothing left: ${d.nothingLeft}`;

export async function benchScale(
  client: Client,
  dataDir: string,
  stackPid: number | undefined,
  sizes: { small: number; large: number; huge?: number },
  columns: number,
  runs: number,
  seedMode: SeedMode,
  hugeSeed: HugeSeedMode = 'batch',
): Promise<ScaleReport> {
  const table = new Table(dataDir);
  // Every mode but `http` is the batch route: bench/run.ts passes `batch` when BENCH_SEED is unset.
  const overHttp = seedMode === 'http';
  try {
    const owner = await client.register('scale');
    const createMs: number[] = [];
    const perColumn = (cards: number) => Math.ceil(cards / columns);
    log(`seeding the ${sizes.small}-card board over HTTP, ${columns} writers`);
    let started = performance.now();
    const small = await makeBoard(client, owner.token, columns, perColumn(sizes.small), DESCRIPTION_1K, (a) =>
      createMs.push(a.wallMs),
    );
    const httpSeconds = (performance.now() - started) / 1000;
    // What a card the service wrote holds, read before the small board is deleted: cards written
    // straight into the table for the huge board must hold the same.
    const writtenDirect = sizes.huge !== undefined && hugeSeed === 'direct';
    const serviceCard = writtenDirect ? itemShape(await table.first(keys.boardPartition(small.id), keys.cardPrefix)) : undefined;
    log(
      `seeded ${small.cards.length} cards in ${httpSeconds.toFixed(1)} s; the ${sizes.large}-card board ${overHttp ? 'over HTTP' : 'through the batch route'}`,
    );
    started = performance.now();
    let large: BoardFixture;
    if (overHttp) {
      large = await makeBoard(client, owner.token, columns, perColumn(sizes.large), DESCRIPTION_1K, (a) =>
        createMs.push(a.wallMs),
      );
    } else {
      large = await seedBoard(client, owner, columns, sizes.large);
    }
    const largeSeconds = (performance.now() - started) / 1000;
    log(`seeded ${large.cards.length} cards in ${largeSeconds.toFixed(1)} s`);

    const beforeTrees = processMemory(stackPid);
    const trees = await treeRuns(client, table, owner.token, [small, large], runs);
    const afterTrees = processMemory(stackPid);
    log(
      `trees: ${trees.map((t) => `${t.cards} cards ${t.wallMs.p50} ms, ${t.pages} pages, timed with ${t.timedWith.contentEncoding}`).join('; ')}`,
    );
    // Two more boards of the same sizes with prose descriptions, read only here: the timed trees'
    // repeated sentence compresses far better than text does.
    const prose = proseDescriptions();
    const proseBoards = [
      await seedBoard(client, owner, columns, sizes.small, prose),
      await seedBoard(client, owner, columns, sizes.large, prose),
    ];
    const wire = await wireRuns(
      client,
      owner.token,
      [
        { ...small, descriptions: 'repeated sentence' },
        { ...large, descriptions: 'repeated sentence' },
        ...proseBoards.map((board) => ({ ...board, descriptions: 'prose' as const })),
      ],
      runs,
    );
    log(
      `bytes on the wire: ${wire
        .map(
          (w) =>
            `${w.cards} cards, ${w.descriptions} (JSON ${w.jsonBytes}) ` +
            w.encodings
              .map((e) => `${e.acceptEncoding} ${e.status} ${e.contentEncoding} ${e.wireBytes} B own p50 ${e.ownMs.p50} ms`)
              .join(', '),
        )
        .join('; ')}`,
    );
    const usual = { pollMs: 100, capMs: 120_000 };
    const deletes = [
      await deleteRun(client, table, dataDir, owner, large, usual),
      await deleteRun(client, table, dataDir, owner, small, usual),
    ];
    log(`deletes: ${deletes.map(describeDelete).join('; ')}`);
    let huge: ScaleReport['seeding']['huge'];
    if (sizes.huge) {
      // Through the batch route, one batch after another (a board takes one change at a time):
      // the board as the service writes it, its log items included (a run a batch), which its
      // deletion removes too. BENCH_HUGE_SEED=direct writes the cards straight into the table instead, in
      // about a sixth of the time, for a quicker run of the deletion alone.
      log(`seeding the ${sizes.huge}-card board ${hugeSeed === 'batch' ? 'through the batch route' : 'with BatchWriteItem'}`);
      started = performance.now();
      let board: BoardFixture;
      if (!writtenDirect) {
        board = await seedBoard(client, owner, columns, sizes.huge);
      } else {
        board = await makeBoard(client, owner.token, columns, 0, DESCRIPTION_1K);
        board.cards = await table.seedCards(board, perColumn(sizes.huge), DESCRIPTION_1K);
        const written = itemShape(await table.first(keys.boardPartition(board.id), keys.cardPrefix));
        if (written !== serviceCard) throw new Error(`seeded cards (${written}) differ from the service's (${serviceCard})`);
      }
      const seconds = (performance.now() - started) / 1000;
      log(`seeded ${board.cards.length} cards in ${seconds.toFixed(1)} s; waiting for the stream consumers to read them`);
      const drainMs = await streamSettled(dataDir);
      huge = {
        mode: hugeSeed,
        cards: board.cards.length,
        seconds: round(seconds, 1),
        cardsPerSecond: round(board.cards.length / seconds, 0),
        streamDrainSeconds: round(drainMs / 1000, 1),
      };
      log(`the stream consumers read the seed's records in ${huge.streamDrainSeconds} s; deleting`);
      deletes.push(await deleteRun(client, table, dataDir, owner, board, { pollMs: 250, capMs: 600_000 }));
      log(`delete: ${describeDelete(deletes.at(-1)!)}`);
    }
    return {
      seeding: {
        http: {
          cards: small.cards.length + (overHttp ? large.cards.length : 0),
          seconds: round(httpSeconds + (overHttp ? largeSeconds : 0), 1),
          cardsPerSecond: round(
            (small.cards.length + (overHttp ? large.cards.length : 0)) / (httpSeconds + (overHttp ? largeSeconds : 0)),
            0,
          ),
          writers: columns,
          createMs: stats(createMs),
        },
        large: {
          mode: overHttp ? 'http' : 'batch',
          cards: large.cards.length,
          seconds: round(largeSeconds, 1),
          cardsPerSecond: round(large.cards.length / largeSeconds, 0),
        },
        ...(huge ? { huge } : {}),
      },
      trees,
      treeRatio: round(trees[1]!.wallMs.p50 / trees[0]!.wallMs.p50),
      wire,
      deletes,
      memory: { beforeTrees, afterTrees },
    };
  } finally {
    table.client.destroy();
  }
}
