import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
import { STAMP_ATTRIBUTE, stamp } from '../lib/data/changes';
import { columnPositionKey, type ItemKey, keys } from '../lib/data/table';
import { type Client, RouteSample, type RouteSummary, type Stats, stats } from './client';
import { type BoardFixture, makeBoard } from './latency';
import { log, pool, processMemory, range, round } from './util';

/**
 * Part 5: board size. Trees of a 500- and a 5,000-card board (1 KB descriptions), deleting them,
 * and checking directly in DynamoDB Local that nothing of a deleted board is left.
 */

export const DESCRIPTION_1K = 'The quick brown fox jumps over the lazy dog. '.repeat(23).slice(0, 1024);
const MIB = 1024 * 1024;

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
   * What-if for docs/performance.md: the same key range read as 17 ranges in parallel (cards by
   * the first hex digit of their id, then the columns), each paged on its own.
   */
  async timedSegmentedQuery(pk: string): Promise<{ ms: number; pages: number; items: number }> {
    const started = performance.now();
    const segments: [string, string][] = [
      ...'0123456789abcdef'.split('').map((h): [string, string] => [`${keys.cardPrefix}${h}`, `${keys.cardPrefix}${h}\uffff`]),
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
   * createCard: the card with its `colpos` index key and its `card.created` change stamp, and its
   * id lookup; positions 1.0, 2.0, ... per column), and each column's card_version set as that
   * many creates would have left it. BatchWriteItem, 25 items a request, 8 requests in flight.
   * Like the service's creates, each card's stream record goes through the broadcaster.
   */
  async seedCards(board: BoardFixture, perColumn: number, description: string, actor: string): Promise<string[]> {
    const writes: WriteRequest[] = [];
    const ids: string[] = [];
    for (const columnId of board.columns) {
      for (const i of range(perColumn)) {
        const id = randomUUID();
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
          [STAMP_ATTRIBUTE]: stamp('card.created', actor),
        };
        writes.push({ PutRequest: { Item: marshall(item) } });
        writes.push({ PutRequest: { Item: marshall({ ...keys.cardLookup(id), type: 'card_lookup', board_id: board.id }) } });
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
  /** The same range as 17 parallel queries (cards by first hex digit of the id, columns): median of 3. */
  emulatorSegmentedQuery: { ms: number; pages: number; items: number };
  wallMs: Stats;
  serverMs: Stats;
  ownMs: Stats;
  responseBytes: number;
}

export interface DeleteRun {
  cards: number;
  wallMs: number;
  serverMs: number;
  calls: number;
  sequential: number;
  commands: Record<string, number>;
  left: { partitionItems: number; lookupsAndMirrors: number; cardsAnswering404: number; cardsChecked: number };
  nothingLeft: boolean;
  /**
   * From sending the DELETE until the partition and the lookups were found empty: the request
   * removes the board item (and the memberships), the table stream's `children.collect` consumer
   * the rest after the answer. Polled every 100 ms, so up to that much late.
   */
  goneMs: number;
}

export interface ScaleReport {
  seeding: {
    http: { cards: number; seconds: number; cardsPerSecond: number; writers: number; createMs: Stats };
    large: { mode: 'http' | 'direct'; cards: number; seconds: number };
  };
  trees: TreeRun[];
  treeRatio: number;
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
    };
  });
}

async function deleteRun(
  client: Client,
  table: Table,
  owner: { token: string; userId: string },
  board: BoardFixture,
): Promise<DeleteRun> {
  const sent = performance.now();
  const answer = await client.send('DELETE', `/boards/${board.id}`, { token: owner.token });
  if (answer.status !== 204) throw new Error(`DELETE /boards/${board.id}: ${answer.status} ${JSON.stringify(answer.body)}`);
  const checked = [0, 1, 2, 3, 4].map((i) => board.cards[Math.floor((i * board.cards.length) / 5)]!);
  let answering404 = 0;
  for (const id of checked) if ((await client.send('GET', `/cards/${id}`, { token: owner.token })).status === 404) answering404++;
  // The rest goes after the answer (the stream's collector): wait until the partition is empty
  // (one item asked for, every 100 ms), then check everything, for up to two minutes.
  const pk = keys.boardPartition(board.id);
  const lookups = [
    ...board.cards.map(keys.cardLookup),
    ...board.columns.map(keys.columnLookup),
    keys.userBoard(owner.userId, board.id),
  ];
  let partitionItems = Number.NaN;
  let outside = Number.NaN;
  let goneMs = Number.NaN;
  const deadline = sent + 120_000;
  while (performance.now() < deadline) {
    if (await table.anyItem(pk)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
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
    calls: answer.trace?.calls ?? Number.NaN,
    sequential: answer.trace?.sequential ?? Number.NaN,
    commands: countCommands(answer.trace?.commands ?? ''),
    left: { partitionItems, lookupsAndMirrors: outside, cardsAnswering404: answering404, cardsChecked: checked.length },
    nothingLeft: partitionItems === 0 && outside === 0 && answering404 === checked.length,
    goneMs: round(goneMs, 0),
  };
}

export async function benchScale(
  client: Client,
  dataDir: string,
  stackPid: number | undefined,
  sizes: { small: number; large: number },
  columns: number,
  runs: number,
  seedMode: 'http' | 'direct',
): Promise<ScaleReport> {
  const table = new Table(dataDir);
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
    log(
      `seeded ${small.cards.length} cards in ${httpSeconds.toFixed(1)} s; the ${sizes.large}-card board ${seedMode === 'http' ? 'over HTTP' : 'with BatchWriteItem'}`,
    );
    started = performance.now();
    let large: BoardFixture;
    if (seedMode === 'http') {
      large = await makeBoard(client, owner.token, columns, perColumn(sizes.large), DESCRIPTION_1K, (a) =>
        createMs.push(a.wallMs),
      );
    } else {
      large = await makeBoard(client, owner.token, columns, 0, DESCRIPTION_1K);
      large.cards = await table.seedCards(large, perColumn(sizes.large), DESCRIPTION_1K, owner.userId);
      // The direct items must look exactly like the service's own: same attributes as a card it created.
      const shape = (item: Record<string, unknown> | undefined) =>
        Object.keys(item ?? {})
          .sort()
          .join(',');
      const [viaHttp, direct] = [
        await table.first(keys.boardPartition(small.id), keys.cardPrefix),
        await table.first(keys.boardPartition(large.id), keys.cardPrefix),
      ];
      if (shape(viaHttp) !== shape(direct)) {
        throw new Error(
          `seeded cards (${shape(direct)}) differ from the service's (${shape(viaHttp)}): run with BENCH_SEED=http`,
        );
      }
    }
    const largeSeconds = (performance.now() - started) / 1000;
    log(`seeded ${large.cards.length} cards in ${largeSeconds.toFixed(1)} s`);

    const beforeTrees = processMemory(stackPid);
    const trees = await treeRuns(client, table, owner.token, [small, large], runs);
    const afterTrees = processMemory(stackPid);
    log(`trees: ${trees.map((t) => `${t.cards} cards ${t.wallMs.p50} ms, ${t.pages} pages`).join('; ')}`);
    const deletes = [await deleteRun(client, table, owner, large), await deleteRun(client, table, owner, small)];
    log(
      `deletes: ${deletes.map((d) => `${d.cards} cards answered in ${d.wallMs} ms, all gone after ${d.goneMs} ms, nothing left: ${d.nothingLeft}`).join('; ')}`,
    );
    return {
      seeding: {
        http: {
          cards: small.cards.length + (seedMode === 'http' ? large.cards.length : 0),
          seconds: round(httpSeconds + (seedMode === 'http' ? largeSeconds : 0), 1),
          cardsPerSecond: round(
            (small.cards.length + (seedMode === 'http' ? large.cards.length : 0)) /
              (httpSeconds + (seedMode === 'http' ? largeSeconds : 0)),
            0,
          ),
          writers: columns,
          createMs: stats(createMs),
        },
        large: { mode: seedMode, cards: large.cards.length, seconds: round(largeSeconds, 1) },
      },
      trees,
      treeRatio: round(trees[1]!.wallMs.p50 / trees[0]!.wallMs.p50),
      deletes,
      memory: { beforeTrees, afterTrees },
    };
  } finally {
    table.client.destroy();
  }
}
