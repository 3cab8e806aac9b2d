import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AttributeValue, QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import WebSocket from 'ws';
import { keys } from '../lib/data/table';
import { CardPlaces } from './card-places';
import { type Answer, type Client, RouteSample, type RouteSummary, type Stats, stats } from './client';
import { type BoardFixture, DESCRIPTION_200, makeBoard } from './latency';
import { itemBytes, Table } from './scale';
import { log, median, percentile, range, round } from './util';

/**
 * Part 6: live board events (docs/reference.md, "Live events") on the local stack. Delivery latency is
 * the time from the owner's REST answer arriving here to the matching event arriving on another
 * member's socket: REST write → DynamoDB Local's stream → the local poller (infra/local/
 * stream-poller.ts, 20 ms idle polls) → the broadcaster (functions/events/broadcast.ts: one Query
 * of the board's members and watches per batch, one PostToConnection per watcher and event) → the
 * local connections API → the socket. Changes go one at a time, each waiting for its event (or
 * a timeout) before the next, so that no event queues behind another.
 *
 * Then the broadcaster itself, for the cost model: its handler is imported into this process
 * (with the stack's local-env.json) and invoked with batches of real log items' INSERT records,
 * timing its DynamoDB and PostToConnection calls apart from its own work. Last, the sizes the
 * event log's cost comes from: the boards' log items per kind, the board item (with a label map:
 * six labels, two on every other card) and the median card item.
 */

export interface DeliveryRun {
  board: string;
  watchers: number;
  sockets: string;
  changes: number;
  delivered: number;
  missed: number;
  /** Frames carrying an event_id the socket had already seen (delivery is at least once). */
  duplicates: number;
  /** Events that arrived before the REST answer had been read (negative latency). */
  beforeAnswer: number;
  /** Last watcher to get each event (the only watcher with one socket). */
  ms: Stats & { p90: number; mean: number };
  /** First watcher to get each event (fan-out only). */
  firstMs?: Stats & { p90: number; mean: number };
  byType: { type: string; n: number; p50: number; p99: number; max: number }[];
  /** UTF-8 bytes of the event frames as received (API Gateway meters messages per 32 KB). */
  frameBytes: { median: number; max: number };
  seconds: number;
}

/** A board's log items of one kind (BOARD#<id> / ~LOG#<seq>), as stored. */
export interface LogSample {
  kind: string;
  items: number;
  /** Median and largest bytes of the log item (names and values, DynamoDB's size rules). */
  itemBytes: number;
  maxBytes: number;
  /** Write units of its Put in the change's transaction: 2 per started KB of the median item. */
  wru: number;
}

/** The items a logged change writes besides its log item, as they end the delivery run. */
export interface ItemSizes {
  /** The board item (title, owner count, label map, seq): every change now updates it in its transaction. */
  board: { bytes: number; labels: number; wru: number };
  /** The median card item: written as a plain UpdateItem before the log by edits and label attaches. */
  card: { bytes: number; plainWru: number; transactionalWru: number };
}

export interface BroadcastCase {
  watchers: number;
  events: number;
  runs: number;
  wallMs: number;
  /** Wall time not spent waiting on DynamoDB or the connections API (median over the runs). */
  ownMs: number;
  /** CPU time of this process during the call (user + system): the handler, the SDK's work for each call, and the frames the sockets receive meanwhile. */
  cpuMs: number;
  waitMs: number;
  dynamoCalls: number;
  queryCapacity: number;
  posts: number;
  /** Calls one after another (earliest-end greedy over DynamoDB and PostToConnection calls). */
  sequential: number;
  framesExpected: number;
  framesReceived: number;
  failures: number;
}

export interface DeliveryReport {
  settings: { changes: number; fanoutChanges: number; fanoutWatchers: number; timeoutMs: number };
  single: DeliveryRun;
  fanout?: DeliveryRun;
  /** REST routes of the changes: round trips, capacity and own time, from the trace headers. */
  routes: RouteSummary[];
  /** Log items of the delivery boards per kind (both boards' `~LOG#` ranges). */
  log: LogSample[];
  items: ItemSizes;
  broadcaster: BroadcastCase[];
  sockets: { opened: number; closedCleanly: number; watchesLeft: number };
}

type Body = Record<string, unknown> & { type?: string; event_id?: string; board_id?: string };

interface Frame {
  at: number;
  bytes: number;
  body: Body;
}

const TIMEOUT_MS = 5_000;

/** One WebSocket of the benchmark, with every frame it received and when. */
class Watcher {
  readonly frames: Frame[] = [];
  private readonly listeners = new Set<() => void>();
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const text = data.toString();
      let body: Body;
      try {
        body = JSON.parse(text) as Body;
      } catch {
        body = { type: '(not JSON)' };
      }
      this.frames.push({ at: performance.now(), bytes: Buffer.byteLength(text), body });
      for (const listener of [...this.listeners]) listener();
    });
    ws.on('close', () => {
      this.closed = true;
      for (const listener of [...this.listeners]) listener();
    });
  }

  /** A ticket over REST, then the handshake with it (the contract's `url?ticket=…`). */
  static async open(client: Client, token: string, tickets: RouteSample): Promise<Watcher> {
    const answer = tickets.add(await client.send('POST', '/realtime/tickets', { token }));
    if (answer.status !== 201) throw new Error(`POST /realtime/tickets: ${answer.status} ${JSON.stringify(answer.body)}`);
    const ws = new WebSocket(`${answer.body.url}?ticket=${encodeURIComponent(answer.body.ticket)}`);
    const watcher = new Watcher(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_request, response) =>
        reject(new Error(`socket handshake answered ${response.statusCode}`)),
      );
    });
    return watcher;
  }

  /** The first frame from index `from` on that matches, or undefined after `timeoutMs`. */
  next(match: (body: Body) => boolean, from: number, timeoutMs = TIMEOUT_MS): Promise<Frame | undefined> {
    return new Promise((resolve) => {
      let i = from;
      const timer = setTimeout(() => done(undefined), timeoutMs);
      const done = (frame: Frame | undefined) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(frame);
      };
      const check = () => {
        for (; i < this.frames.length; i++) if (match(this.frames[i]!.body)) return done(this.frames[i]);
        if (this.closed) done(undefined);
      };
      this.listeners.add(check);
      check();
    });
  }

  async watch(boardId: string): Promise<void> {
    const from = this.frames.length;
    this.ws.send(JSON.stringify({ action: 'watch', board_id: boardId }));
    const answer = await this.next((b) => (b.type === 'watch.ack' || b.type === 'error') && b.board_id === boardId, from);
    if (answer?.body.type !== 'watch.ack') throw new Error(`watch ${boardId}: ${JSON.stringify(answer?.body ?? 'no answer')}`);
  }

  /** Frames whose event_id this socket had seen before. */
  duplicates(until = this.frames.length): number {
    const seen = new Set<string>();
    let repeated = 0;
    for (const frame of this.frames.slice(0, until)) {
      const id = frame.body.event_id;
      if (!id) continue;
      if (seen.has(id)) repeated++;
      seen.add(id);
    }
    return repeated;
  }

  /** A normal close (1000); true once the server's close frame has come back. */
  async close(): Promise<boolean> {
    if (this.closed) return true;
    const closed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 3_000);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    this.ws.close(1000, 'bench done');
    const clean = await closed;
    if (!clean) this.ws.terminate();
    return clean;
  }
}

/** A REST change and how to recognise its event. */
interface Change {
  route: string;
  status: number;
  method: string;
  path: string;
  body?: unknown;
  /** The event this answer must produce. */
  event: (answer: Answer) => { type: string; match: (e: Body) => boolean };
  after?: (answer: Answer) => void;
}

const field = (e: Body, name: string) => e[name] as Record<string, unknown> | undefined;

/**
 * The changes, cycling through 20: 7 card moves (every other one between two neighbours), 6 card
 * title updates, 2 card creates, 1 delete of a card created here, 1 column rename, 1 column move,
 * 1 role change of a third member and 1 board rename. Every change really changes something (a
 * write that changes nothing emits nothing). Each event is matched by its type and by what the
 * answer says the change was (id plus title, position or role).
 */
class ChangePlan {
  private readonly created: string[] = [];
  private role: 'member' | 'owner' = 'member';

  private constructor(
    private readonly board: BoardFixture,
    private readonly bystanderId: string,
    private readonly columnPositions: Map<string, number>,
    private readonly places: CardPlaces,
  ) {}

  /** The columns' positions come from the board's tree (one untimed read). */
  static async create(client: Client, token: string, board: BoardFixture, bystanderId: string): Promise<ChangePlan> {
    const tree = await client.expect(200, 'GET', `/boards/${board.id}`, { token });
    const positions = new Map<string, number>(
      (tree.body.columns as { id: string; position: number }[]).map((c) => [c.id, c.position]),
    );
    return new ChangePlan(board, bystanderId, positions, new CardPlaces(tree.body));
  }

  change(i: number): Change {
    const { board } = this;
    const k = i % 20;
    const cards = board.cards;
    if (k < 7) {
      const id = cards[(i * 7 + 3) % cards.length]!;
      const target = board.columns[i % board.columns.length]!;
      const before = cards[(i * 5 + 1) % cards.length]!;
      const after = cards[(i * 3 + 2) % cards.length]!;
      const neighbours = k % 2 === 1 && before !== id && after !== id && before !== after;
      return {
        route: 'cards.move',
        status: 200,
        method: 'PATCH',
        path: `/cards/${id}/move`,
        body: this.places.body(id, target, neighbours ? { before, after } : undefined),
        after: (a) => this.places.moved(a.body),
        event: (a) => ({
          type: 'card.moved',
          match: (e) =>
            field(e, 'card')?.id === id &&
            field(e, 'card')?.position === a.body.position &&
            field(e, 'card')?.column_id === a.body.column_id,
        }),
      };
    }
    if (k < 13) {
      const id = cards[(i * 11 + 5) % cards.length]!;
      const title = `Delivery ${i}`;
      return {
        route: 'cards.update',
        status: 200,
        method: 'PATCH',
        path: `/cards/${id}`,
        body: { title },
        event: () => ({ type: 'card.updated', match: (e) => field(e, 'card')?.id === id && field(e, 'card')?.title === title }),
      };
    }
    if (k < 15) {
      return {
        route: 'cards.create',
        status: 201,
        method: 'POST',
        path: `/columns/${board.columns[i % board.columns.length]}/cards`,
        body: { title: `Created ${i}`, description: DESCRIPTION_200 },
        event: (a) => ({ type: 'card.created', match: (e) => field(e, 'card')?.id === a.body.id }),
        after: (a) => this.created.push(a.body.id),
      };
    }
    if (k === 15) {
      const id = this.created.shift();
      if (id) {
        return {
          route: 'cards.delete',
          status: 204,
          method: 'DELETE',
          path: `/cards/${id}`,
          event: () => ({ type: 'card.deleted', match: (e) => e.card_id === id }),
        };
      }
    }
    const column = board.columns[i % board.columns.length]!;
    if (k === 16 || k === 15) {
      const title = `Column ${i}`;
      return {
        route: 'columns.rename',
        status: 200,
        method: 'PATCH',
        path: `/columns/${column}`,
        body: { title },
        event: () => ({
          type: 'column.updated',
          match: (e) => field(e, 'column')?.id === column && field(e, 'column')?.title === title,
        }),
      };
    }
    if (k === 17) {
      // Always somewhere else (a move to where the column is writes nothing and emits nothing):
      // after the last of the others, or before the first of them when it is the last itself.
      const mine = this.columnPositions.get(column)!;
      const others = [...this.columnPositions].filter(([id]) => id !== column).sort((a, b) => a[1] - b[1]);
      const [first, last] = [others[0]!, others.at(-1)!];
      return {
        route: 'columns.move',
        status: 200,
        method: 'PATCH',
        path: `/columns/${column}/move`,
        body: mine > last[1] ? { after_id: first[0] } : { before_id: last[0] },
        event: (a) => ({
          type: 'column.moved',
          match: (e) => field(e, 'column')?.id === column && field(e, 'column')?.position === a.body.position,
        }),
        after: (a) => {
          this.columnPositions.set(column, a.body.position);
        },
      };
    }
    if (k === 18) {
      const role = this.role === 'member' ? 'owner' : 'member';
      return {
        route: 'members.update',
        status: 200,
        method: 'PATCH',
        path: `/boards/${board.id}/members/${this.bystanderId}`,
        body: { role },
        event: () => ({
          type: 'member.updated',
          match: (e) => field(e, 'member')?.user_id === this.bystanderId && field(e, 'member')?.role === role,
        }),
        after: () => {
          this.role = role;
        },
      };
    }
    const title = `Board ${i}`;
    return {
      route: 'boards.rename',
      status: 200,
      method: 'PATCH',
      path: `/boards/${board.id}`,
      body: { title },
      event: () => ({ type: 'board.updated', match: (e) => field(e, 'board')?.title === title }),
    };
  }
}

const fullStats = (values: number[]) => ({
  ...stats(values),
  p90: round(percentile(values, 90), 3),
  mean: round(values.reduce((s, v) => s + v, 0) / Math.max(1, values.length), 3),
});

/**
 * Sends `count` changes one after another and waits, for each, for its event on every watcher:
 * the latency of a change is the last watcher's arrival time minus the REST answer's.
 */
async function deliveryRun(
  client: Client,
  token: string,
  plan: ChangePlan,
  watchers: Watcher[],
  count: number,
  samples: (route: string, status: number) => RouteSample,
  label: { board: string; sockets: string },
  firstIndex: number,
): Promise<DeliveryRun> {
  const started = performance.now();
  const last: number[] = [];
  const first: number[] = [];
  const byType = new Map<string, number[]>();
  const frameBytes: number[] = [];
  const starts = watchers.map((w) => w.frames.length);
  let missed = 0;
  let beforeAnswer = 0;
  for (const n of range(count)) {
    const change = plan.change(firstIndex + n);
    const from = watchers.map((w) => w.frames.length);
    const answer = samples(change.route, change.status).add(
      await client.send(change.method, change.path, { token, body: change.body }),
    );
    const answeredAt = performance.now();
    if (answer.status !== change.status) {
      missed++;
      continue;
    }
    change.after?.(answer);
    const expected = change.event(answer);
    const frames = await Promise.all(
      watchers.map((w, i) => w.next((e) => e.type === expected.type && expected.match(e), from[i]!)),
    );
    if (frames.some((f) => f === undefined)) {
      missed++;
      continue;
    }
    const arrivals = frames.map((f) => f!.at - answeredAt);
    if (arrivals.some((ms) => ms < 0)) beforeAnswer++;
    last.push(Math.max(...arrivals));
    first.push(Math.min(...arrivals));
    frameBytes.push(frames[0]!.bytes);
    const list = byType.get(expected.type) ?? [];
    list.push(Math.max(...arrivals));
    byType.set(expected.type, list);
  }
  return {
    ...label,
    watchers: watchers.length,
    changes: count,
    delivered: last.length,
    missed,
    duplicates: watchers.reduce((sum, w, i) => sum + w.duplicates() - w.duplicates(starts[i]), 0),
    beforeAnswer,
    ms: fullStats(last),
    ...(watchers.length > 1 ? { firstMs: fullStats(first) } : {}),
    byType: [...byType].map(([type, values]) => ({
      type,
      n: values.length,
      p50: round(percentile(values, 50), 1),
      p99: round(percentile(values, 99), 1),
      max: round(Math.max(...values), 1),
    })),
    frameBytes: { median: median(frameBytes), max: Math.max(...frameBytes) },
    seconds: round((performance.now() - started) / 1000, 1),
  };
}

/** Owner makes the board; the others are added as members over REST. */
async function boardWithMembers(
  client: Client,
  ownerToken: string,
  emails: string[],
  samples: (r: string, s: number) => RouteSample,
) {
  const board = await makeBoard(client, ownerToken, 4, 10, DESCRIPTION_200);
  for (const email of emails) {
    const added = samples('members.add', 201).add(
      await client.send('POST', `/boards/${board.id}/members`, { token: ownerToken, body: { email, role: 'member' } }),
    );
    if (added.status !== 201) throw new Error(`POST /boards/${board.id}/members: ${added.status} ${JSON.stringify(added.body)}`);
  }
  return board;
}

/** Labels a board as a team would: the board item then holds a label map, some cards carry labels. */
const LABELS: [string, string][] = [
  ['bug', '#d73a4a'],
  ['feature', '#a2eeef'],
  ['urgent', '#b60205'],
  ['blocked', '#000000'],
  ['design', '#5319e7'],
  ['later', '#c5def5'],
];

async function labelBoard(
  client: Client,
  token: string,
  board: BoardFixture,
  samples: (r: string, s: number) => RouteSample,
): Promise<void> {
  const ids: string[] = [];
  for (const [name, color] of LABELS) {
    const created = samples('labels.create', 201).add(
      await client.send('POST', `/boards/${board.id}/labels`, { token, body: { name, color } }),
    );
    if (created.status !== 201) throw new Error(`POST labels: ${created.status} ${JSON.stringify(created.body)}`);
    ids.push(created.body.id);
  }
  // Every other card gets two labels.
  for (const [i, card] of board.cards.entries()) {
    if (i % 2 === 1) continue;
    for (const label of [ids[i % ids.length]!, ids[(i + 1) % ids.length]!]) {
      const attached = samples('cards.labels.attach', 200).add(
        await client.send('PUT', `/cards/${card}/labels/${label}`, { token }),
      );
      if (attached.status !== 200) throw new Error(`PUT card label: ${attached.status} ${JSON.stringify(attached.body)}`);
    }
  }
}

/** Raw items of a partition (or of the part of it whose sort key starts with a prefix). */
async function rawItems(table: Table, boardId: string, prefix?: string): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const out = await table.client.send(
      new QueryCommand({
        TableName: table.name,
        KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
        ExpressionAttributeValues: marshall(
          prefix ? { ':pk': keys.boardPartition(boardId), ':prefix': prefix } : { ':pk': keys.boardPartition(boardId) },
        ),
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Write units of a write of `bytes` (1 per started KB, 2 in a transaction). */
const writeUnits = (bytes: number, transactional: boolean) => (transactional ? 2 : 1) * Math.max(1, Math.ceil(bytes / 1024));

/** The boards' log items as stored, per kind: median and largest bytes, and the Put's write units. */
async function logSizes(table: Table, boardIds: string[]): Promise<LogSample[]> {
  const byKind = new Map<string, number[]>();
  for (const boardId of boardIds) {
    for (const item of await rawItems(table, boardId, keys.logPrefix)) {
      const kind = item.kind?.S ?? '?';
      byKind.set(kind, [...(byKind.get(kind) ?? []), itemBytes(item)]);
    }
  }
  return [...byKind]
    .map(([kind, sizes]) => {
      const bytes = median(sizes);
      return { kind, items: sizes.length, itemBytes: bytes, maxBytes: Math.max(...sizes), wru: writeUnits(bytes, true) };
    })
    .sort((a, b) => a.kind.localeCompare(b.kind));
}

/** The board item and the median card item of a board, as stored. */
async function itemSizes(table: Table, boardId: string): Promise<ItemSizes> {
  const items = await rawItems(table, boardId);
  const board = items.find((item) => item.type?.S === 'board');
  if (!board) throw new Error(`board ${boardId}: no board item`);
  const cards = items.filter((item) => item.type?.S === 'card').map(itemBytes);
  const boardBytes = itemBytes(board);
  const cardBytes = median(cards);
  return {
    board: { bytes: boardBytes, labels: Object.keys(board.labels?.M ?? {}).length, wru: writeUnits(boardBytes, true) },
    card: { bytes: cardBytes, plainWru: writeUnits(cardBytes, false), transactionalWru: writeUnits(cardBytes, true) },
  };
}

type Handler = (event: { Records: unknown[] }) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;
type CallRecord = { command: string; start: number; end: number; capacityUnits: number };

/**
 * The broadcaster's own handler in this process, against the stack's DynamoDB Local and
 * connections API (local-env.json), with the local trace on its DynamoDB client and a timer on
 * the connections API client's `send`. Its records are INSERT records of real log items (the
 * board's `~LOG#` range, card events), the only records it reads since the event log, so every
 * watcher gets each event once more (a redelivery: same seq and event_id).
 */
async function loadBroadcaster(dataDir: string) {
  const env = JSON.parse(readFileSync(join(dataDir, 'local-env.json'), 'utf8')) as Record<string, string>;
  // The handler's modules read their configuration at import. Its logs and metrics would go to
  // stdout, where the report is written: off.
  Object.assign(process.env, env, { LOG_LEVEL: 'SILENT', METRICS_DISABLED: 'true' });
  const trace = await import('../infra/local/trace');
  const { documentClient } = await import('../lib/data/db');
  trace.instrumentClient(documentClient);
  const management = await import('@aws-sdk/client-apigatewaymanagementapi');
  const prototype = management.ApiGatewayManagementApiClient.prototype as unknown as {
    send: (...args: unknown[]) => Promise<unknown>;
  };
  const send = prototype.send;
  prototype.send = async function timedSend(this: unknown, ...args: unknown[]) {
    const record: CallRecord = {
      command: (args[0] as object).constructor.name,
      start: performance.now(),
      end: 0,
      capacityUnits: 0,
    };
    trace.traceStorage.getStore()?.calls.push(record);
    try {
      return await send.apply(this, args);
    } finally {
      record.end = performance.now();
    }
  };
  const { handler } = (await import('../functions/events/broadcast')) as unknown as { handler: Handler };
  return { handler, trace };
}

async function measureBroadcaster(
  dataDir: string,
  table: Table,
  boards: { id: string; watchers: Watcher[] }[],
): Promise<BroadcastCase[]> {
  const { handler, trace } = await loadBroadcaster(dataDir);
  const cases: BroadcastCase[] = [];
  let sequence = 0;
  for (const board of boards) {
    // Card events only: a member's or the board's own events would change who watches.
    const logged = (await rawItems(table, board.id, keys.logPrefix)).filter((item) => item.kind?.S?.startsWith('card.'));
    if (logged.length === 0) throw new Error(`board ${board.id}: no card events in its log`);
    const record = (i: number) => {
      const item = logged[i % logged.length]!;
      return {
        eventID: randomUUID(),
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        dynamodb: {
          Keys: { pk: item.pk, sk: item.sk },
          NewImage: item,
          SequenceNumber: String(++sequence).padStart(21, '0'),
          SizeBytes: itemBytes(item),
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
      };
    };
    for (const [events, runs] of [
      [1, 20],
      [10, 5],
      [100, 2],
    ] as const) {
      const framesBefore = board.watchers.reduce((sum, w) => sum + w.frames.length, 0);
      const runsOf: { wall: number; wait: number; cpu: number; calls: CallRecord[]; failures: number }[] = [];
      for (const _ of range(runs + 1)) {
        const records = range(events).map(record);
        const calls: CallRecord[] = [];
        const cpu = process.cpuUsage();
        const started = performance.now();
        const result = await trace.traceStorage.run({ calls }, () => handler({ Records: records }));
        const wall = performance.now() - started;
        const used = process.cpuUsage(cpu);
        runsOf.push({
          wall,
          wait: trace.timeInDynamoDb(calls),
          cpu: (used.user + used.system) / 1000,
          calls,
          failures: result.batchItemFailures.length,
        });
      }
      runsOf.shift(); // the first run of each case warms its code paths
      await new Promise((resolve) => setTimeout(resolve, 300));
      const framesReceived = board.watchers.reduce((sum, w) => sum + w.frames.length, 0) - framesBefore;
      const posts = (calls: CallRecord[]) => calls.filter((c) => c.command === 'PostToConnectionCommand').length;
      const dynamo = (calls: CallRecord[]) => calls.filter((c) => c.command !== 'PostToConnectionCommand');
      if (runsOf.every((r) => posts(r.calls) === 0)) throw new Error('PostToConnection calls were not seen by the bench timer');
      cases.push({
        watchers: board.watchers.length,
        events,
        runs,
        wallMs: round(median(runsOf.map((r) => r.wall)), 2),
        ownMs: round(median(runsOf.map((r) => r.wall - r.wait)), 3),
        cpuMs: round(median(runsOf.map((r) => r.cpu)), 2),
        waitMs: round(median(runsOf.map((r) => r.wait)), 2),
        dynamoCalls: median(runsOf.map((r) => dynamo(r.calls).length)),
        queryCapacity: median(runsOf.map((r) => dynamo(r.calls).reduce((sum, c) => sum + c.capacityUnits, 0))),
        posts: median(runsOf.map((r) => posts(r.calls))),
        sequential: median(runsOf.map((r) => trace.sequentialRoundTrips(r.calls))),
        // The warm-up run's frames arrive too.
        framesExpected: (runs + 1) * events * board.watchers.length,
        framesReceived,
        failures: runsOf.reduce((sum, r) => sum + r.failures, 0),
      });
      log(
        `broadcaster: ${events} event(s) × ${board.watchers.length} watcher(s): ${cases.at(-1)!.wallMs} ms wall, ${cases.at(-1)!.ownMs} ms own, ${cases.at(-1)!.cpuMs} ms CPU`,
      );
    }
  }
  return cases;
}

/**
 * Untimed changes, each waiting for its event: warms the code paths, and the first events also
 * wait for any backlog of the stream (earlier phases' writes) to drain.
 */
async function warmUp(client: Client, token: string, plan: ChangePlan, socket: Watcher, count: number): Promise<void> {
  const warm = new RouteSample('warm-up', 0);
  for (const i of range(count)) {
    const change = plan.change(i);
    const from = socket.frames.length;
    const answer = warm.add(await client.send(change.method, change.path, { token, body: change.body }));
    if (answer.status !== change.status)
      throw new Error(`warm-up ${change.route}: ${answer.status} ${JSON.stringify(answer.body)}`);
    change.after?.(answer);
    const expected = change.event(answer);
    if (!(await socket.next((e) => e.type === expected.type && expected.match(e), from, 60_000)))
      throw new Error(`warm-up: no ${expected.type} event within 60 s`);
  }
}

export async function benchDelivery(
  client: Client,
  dataDir: string,
  settings: { changes: number; fanoutChanges: number; fanoutWatchers: number },
): Promise<DeliveryReport> {
  const table = new Table(dataDir);
  const watchers: Watcher[] = [];
  const samples = new Map<string, RouteSample>();
  const sample = (route: string, status: number) => {
    if (!samples.has(route)) samples.set(route, new RouteSample(route, status));
    return samples.get(route)!;
  };
  const tickets = sample('realtime.tickets', 201);
  try {
    // Users: the owner makes every change; the member watches; a third member's role is toggled.
    const owner = await client.register('delivery-owner');
    const member = await client.register('delivery-member');
    const bystander = await client.register('delivery-bystander');
    const board = await boardWithMembers(client, owner.token, [member.email, bystander.email], sample);
    await labelBoard(client, owner.token, board, sample);

    const socket = await Watcher.open(client, member.token, tickets);
    watchers.push(socket);
    await socket.watch(board.id);
    const plan = await ChangePlan.create(client, owner.token, board, bystander.userId);
    await warmUp(client, owner.token, plan, socket, 10);
    log(`delivery: ${settings.changes} changes, one watcher`);
    const single = await deliveryRun(
      client,
      owner.token,
      plan,
      [socket],
      settings.changes,
      sample,
      { board: '4 columns × 10 cards, 3 members', sockets: '1 socket of a member' },
      10,
    );
    log(`delivery: p50 ${single.ms.p50} ms, p99 ${single.ms.p99} ms, ${single.missed} missed`);
    const items = await itemSizes(table, board.id);

    // Fan-out: a second board with five more members, each with sockets on it.
    let fanout: DeliveryRun | undefined;
    let fanBoardId: string | undefined;
    const fanoutWatchers: Watcher[] = [];
    if (settings.fanoutWatchers > 0 && settings.fanoutChanges > 0) {
      const perMember = 4;
      const members = await Promise.all(
        range(Math.ceil(settings.fanoutWatchers / perMember)).map((i) => client.register(`fanout-${i}`)),
      );
      const fanBystander = await client.register('fanout-bystander');
      const fanBoard = await boardWithMembers(client, owner.token, [...members.map((m) => m.email), fanBystander.email], sample);
      for (const i of range(settings.fanoutWatchers)) {
        const watcher = await Watcher.open(client, members[Math.floor(i / perMember)]!.token, tickets);
        watchers.push(watcher);
        fanoutWatchers.push(watcher);
        await watcher.watch(fanBoard.id);
      }
      const fanPlan = await ChangePlan.create(client, owner.token, fanBoard, fanBystander.userId);
      await warmUp(client, owner.token, fanPlan, fanoutWatchers[0]!, 5);
      log(`delivery: ${settings.fanoutChanges} changes, ${settings.fanoutWatchers} watchers`);
      fanout = await deliveryRun(
        client,
        owner.token,
        fanPlan,
        fanoutWatchers,
        settings.fanoutChanges,
        sample,
        {
          board: '4 columns × 10 cards',
          sockets: `${settings.fanoutWatchers} sockets of ${members.length} members (${perMember} each)`,
        },
        5,
      );
      log(`fan-out: last watcher p50 ${fanout.ms.p50} ms, p99 ${fanout.ms.p99} ms, ${fanout.missed} missed`);
      // Let the last events' frames land before the broadcaster is timed.
      await new Promise((resolve) => setTimeout(resolve, 500));
      fanBoardId = fanBoard.id;
    }

    const logSamples = await logSizes(table, [board.id, ...(fanBoardId ? [fanBoardId] : [])]);
    const broadcaster = await measureBroadcaster(dataDir, table, [
      { id: board.id, watchers: [socket] },
      ...(fanBoardId ? [{ id: fanBoardId, watchers: fanoutWatchers }] : []),
    ]);

    const closed = await Promise.all(watchers.map((w) => w.close()));
    // $disconnect forgets each socket's watches: none may be left once every socket is closed.
    let watchesLeft = Number.NaN;
    for (const _ of range(20)) {
      watchesLeft = 0;
      for (const id of [board.id, ...(fanBoardId ? [fanBoardId] : [])])
        watchesLeft += (await rawItems(table, id, keys.watchPrefix)).length;
      if (watchesLeft === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return {
      settings: { ...settings, timeoutMs: TIMEOUT_MS },
      single,
      fanout,
      routes: [...samples.values()].map((s) => s.summary()),
      log: logSamples,
      items,
      broadcaster,
      sockets: { opened: watchers.length, closedCleanly: closed.filter(Boolean).length, watchesLeft },
    };
  } finally {
    for (const w of watchers) if (!w.closed) w.ws.terminate();
    table.client.destroy();
  }
}
