import { rateLimitPlacementOf, rateLimitRoundTripsOf } from '../lib/http/rate-limit';
import { routes as routeTable } from '../lib/routes';
import type { RouteRow } from '../lib/rows/row';
import type { RouteSummary } from './client';
import type { BroadcastCase, DeliveryReport, ItemSizes, LogSample } from './delivery';
import { round } from './util';

/**
 * Dollars per million requests of a realistic mix, from the measured figures. Lambda cannot run
 * here, so its billed duration is an assumption (own time measured here + an assumed in-region
 * DynamoDB latency per sequential round trip); DynamoDB units come from the measured capacity,
 * except for multi-item transactions, which DynamoDB Local under-reports (see UNIT_MODEL).
 */

/** us-east-1 list prices as known to the author, as of mid-2025. Check them before relying on them. */
export const PRICES = {
  asOf: 'mid-2025 (us-east-1 list prices; check the AWS pricing pages before use)',
  lambdaArm64PerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  httpApiPerMillionRequests: 1.0, // first 300 million a month; each 512 KB of a request or response is one request
  dynamoOnDemandPerMillionReadUnits: 0.125,
  dynamoOnDemandPerMillionWriteUnits: 0.625,
  /** Standard table class; each item is billed 100 bytes more than its data (indexing overhead). */
  dynamoStoragePerGbMonth: 0.25,
  cloudWatchLogsPerGbIngested: 0.5,
  xrayPerMillionTracesRecorded: 5.0,
  /** WebSocket API: messages sent and received, each 32 KB of a message counted as one (first billion a month). */
  webSocketPerMillionMessages: 1.0,
  webSocketPerMillionConnectionMinutes: 0.25,
  /** GetRecords calls that Lambda's event source mapping makes on a DynamoDB stream are not charged. */
  dynamoStreamReadsByLambda: 0,
};

export const ASSUMPTIONS = {
  /** In-region DynamoDB latency of one round trip as the function waits for it (not measurable here). */
  dynamoRoundTripMs: 6,
  /** Cognito calls of registration (SignUp, AdminConfirmSignUp, InitiateAuth) and login (InitiateAuth). */
  cognitoMs: { 'auth.register': 150, 'auth.login': 60 } as Record<string, number>,
  /** One request log line plus Lambda's START/END/REPORT lines. */
  logBytesPerRequest: 600,
  /** X-Ray's default sampling: the first request each second and 5 % of the rest. */
  xraySampledShare: 0.05,
  httpApiMeteringBytes: 512 * 1024,
};

/** The mix: share of requests per route, for a team using boards of ~100 cards. */
export const MIX: Record<string, number> = {
  'boards.get': 0.25,
  'cards.get': 0.2,
  'boards.list': 0.1,
  'cards.update': 0.15,
  'cards.move': 0.1,
  'cards.create': 0.1,
  'cards.delete': 0.03,
  'boards.create': 0.02,
  'columns.create': 0.02,
  'boards.rename': 0.01,
  'boards.delete': 0.005,
  'auth.login': 0.01,
  'auth.register': 0.005,
};

/**
 * Read and write request units per request. DynamoDB Local reports capacity correctly for single
 * requests, but a TransactWriteItems of several items is reported as if it held one (measured: 3
 * small Puts report 2 units; DynamoDB bills 2 per item, condition checks included, so 6). Routes
 * with a transaction use the item counts of lib/data (all items < 1 KB at 200-byte descriptions),
 * plus the LSI entry written or removed (assumed billed at the transactional rate). Since the event
 * log every change of a board is such a transaction: its own writes, the board item's
 * Update (seq) and the log item's Put; what that adds is itemised by eventCostModel below.
 */
/** Write units of the rate limiter's counter update on a counted request (docs/rate-limits.md). */
export const RATE_LIMIT_WRU = 1;

/**
 * What the rate limiter adds to one request of a row (docs/rate-limits.md), by where its count goes
 * (lib/http/rate-limit.ts `rateLimitPlacementOf`, the chain's own rule): a counter UpdateItem of its
 * own, RATE_LIMIT_WRU; folded into the route's transaction (POST /boards, POST /realtime/tickets),
 * the same item billed at the transactional rate (2 × RATE_LIMIT_WRU) plus its strongly consistent
 * read-back beside it (1 RRU: one item under 4 KB). Sequential round trips: only behind a gate with
 * no read before it (`rateLimitRoundTripsOf`). Undefined: the row is not counted. The bench's stack
 * runs without limits, so this is added to what it measures.
 */
export function rateLimitCost(row: RouteRow): { rru: number; wru: number; roundTrips: number; source: string } | undefined {
  const placement = rateLimitPlacementOf(row);
  if (!placement) return undefined;
  const roundTrips = rateLimitRoundTripsOf(row);
  return placement === 'fold'
    ? {
        rru: 1,
        wru: 2 * RATE_LIMIT_WRU,
        roundTrips,
        source: "+ 2 WRU and 1 RRU, the rate limiter's counter in the transaction and its read-back",
      }
    : {
        rru: 0,
        wru: RATE_LIMIT_WRU,
        roundTrips,
        source: `+ ${RATE_LIMIT_WRU} WRU, the rate limiter's counter${roundTrips ? ' (1 sequential round trip before the first change)' : ''}`,
      };
}

export const UNIT_MODEL: Record<string, (measured: number) => { rru: number; wru: number; source: string }> = {
  health: () => ({ rru: 0, wru: 0, source: 'no table access' }),
  'auth.login': () => ({ rru: 0, wru: 0, source: 'no table access' }),
  'auth.register': () => ({ rru: 0, wru: 4, source: 'model: transaction of 2 Puts' }),
  'boards.list': (m) => ({ rru: m, wru: 0, source: 'measured' }),
  'boards.get': (m) => ({ rru: m, wru: 0, source: 'measured' }),
  // A card route reads the card at both of its keys: the one with no item is billed (1 RRU) by
  // DynamoDB, not by DynamoDB Local.
  'cards.get': (m) => ({ rru: m + 1, wru: 0, source: 'measured, + the ARCHIVED# key with no item (1 RRU)' }),
  'boards.rename': () => ({
    rru: 2,
    wru: 4,
    source: 'model: BatchGetItem of 2 (2 RRU); transaction of the board Update and the log Put',
  }),
  'cards.update': () => ({
    rru: 5,
    wru: 6,
    source:
      'model: 2 BatchGetItem (5 RRU, the card at both keys); transaction of the card Update, the board Update and the log Put',
  }),
  // The board item goes in a transaction with its log item and its card-id prefix item: billed
  // 3 × 2 WRU, reported as 2.
  'boards.delete': (m) => ({
    rru: 3,
    wru: m - 3 - 2 + 6,
    source:
      'measured (BatchGetItem 2 + Query 1 RRU), the transaction of board Delete + prefix item Delete + log Put as billed (6, reported 2)',
  }),
  'boards.create': () => ({
    rru: 0,
    wru: 8,
    source: 'model: transaction of 4 Puts (board, card-id prefix item, membership, its mirror)',
  }),
  'columns.create': () => ({
    rru: 3,
    wru: 8,
    source: 'model: 2 reads + Query; transaction of 2 Puts, the board Update and the log Put',
  }),
  'cards.create': () => ({
    rru: 5,
    wru: 12,
    source:
      'model: 4 reads + LSI Query; transaction of the card Put, the column lookup Update, 1 ConditionCheck, the board Update, the log Put + LSI entry',
  }),
  'cards.delete': () => ({
    rru: 5,
    wru: 8,
    source: 'model: 5 reads (the card at both keys); transaction of the card Delete, the board Update, the log Put + LSI entry',
  }),
  'cards.move': () => ({
    rru: 9,
    wru: 12,
    source:
      'model: 7-11 reads (half with neighbours; the card at both keys); transaction of 1 Update, 1 ConditionCheck, the board Update, the log Put + 2 LSI entries',
  }),
};

export interface RouteCost {
  route: string;
  share: number;
  billedMs: number;
  rru: number;
  wru: number;
  measuredCapacity: number;
  unitSource: string;
  httpApiUnits: number;
  perMillion: { lambda: number; dynamodb: number; httpApi: number; logs: number; xray: number; total: number };
}

export interface CostReport {
  prices: typeof PRICES;
  assumptions: typeof ASSUMPTIONS & { memoryMb: number };
  routes: RouteCost[];
  mixPerMillion: { lambda: number; dynamodb: number; httpApi: number; logs: number; xray: number; total: number };
}

export function costModel(routes: RouteSummary[], memoryMb: number): CostReport {
  const byRoute = new Map(routes.map((r) => [r.route, r]));
  const costs: RouteCost[] = [];
  for (const [route, share] of Object.entries(MIX)) {
    const r = byRoute.get(route);
    if (!r) continue;
    const cognito = ASSUMPTIONS.cognitoMs[route] ?? 0;
    // Cognito routes: the local "own" time includes the emulator's answers; 2 ms of own work is assumed instead.
    const serviceMs = cognito > 0 ? 2 : r.ownMs.p50;
    const modelled = UNIT_MODEL[route]?.(r.capacity.median) ?? { rru: r.capacity.median, wru: 0, source: 'measured' };
    // The rate limiter (docs/rate-limits.md): the bench's stack runs without limits, so it is added here.
    const limiter = rateLimitCost(routeTable[route as keyof typeof routeTable]);
    const sequential = r.sequential.median + (limiter?.roundTrips ?? 0);
    const billedMs = Math.ceil(serviceMs + sequential * ASSUMPTIONS.dynamoRoundTripMs + cognito);
    const units = limiter
      ? {
          rru: modelled.rru + limiter.rru,
          wru: modelled.wru + limiter.wru,
          source: `${modelled.source}; ${limiter.source}`,
        }
      : modelled;
    const httpApiUnits = Math.max(1, Math.ceil(r.responseBytes / ASSUMPTIONS.httpApiMeteringBytes));
    const lambda = PRICES.lambdaPerMillionRequests + (memoryMb / 1024) * (billedMs / 1000) * 1e6 * PRICES.lambdaArm64PerGbSecond;
    const dynamodb = units.rru * PRICES.dynamoOnDemandPerMillionReadUnits + units.wru * PRICES.dynamoOnDemandPerMillionWriteUnits;
    const httpApi = httpApiUnits * PRICES.httpApiPerMillionRequests;
    const logs = ((ASSUMPTIONS.logBytesPerRequest * 1e6) / 1e9) * PRICES.cloudWatchLogsPerGbIngested;
    const xray = ASSUMPTIONS.xraySampledShare * PRICES.xrayPerMillionTracesRecorded;
    costs.push({
      route,
      share,
      billedMs,
      rru: round(units.rru, 1),
      wru: round(units.wru, 1),
      measuredCapacity: r.capacity.median,
      unitSource: units.source,
      httpApiUnits,
      perMillion: {
        lambda: round(lambda, 3),
        dynamodb: round(dynamodb, 3),
        httpApi: round(httpApi, 3),
        logs: round(logs, 3),
        xray: round(xray, 3),
        total: round(lambda + dynamodb + httpApi + logs + xray, 3),
      },
    });
  }
  const totalShare = costs.reduce((s, c) => s + c.share, 0);
  const weighted = (f: (c: RouteCost) => number) =>
    round(
      costs.reduce((s, c) => s + (c.share / totalShare) * f(c), 0),
      3,
    );
  return {
    prices: PRICES,
    assumptions: { ...ASSUMPTIONS, memoryMb },
    routes: costs,
    mixPerMillion: {
      lambda: weighted((c) => c.perMillion.lambda),
      dynamodb: weighted((c) => c.perMillion.dynamodb),
      httpApi: weighted((c) => c.perMillion.httpApi),
      logs: weighted((c) => c.perMillion.logs),
      xray: weighted((c) => c.perMillion.xray),
      total: weighted((c) => c.perMillion.total),
    },
  };
}

/**
 * Live board events: what 1,000 events cost on top of the writes that make them. The stream's
 * reads are free for a Lambda trigger; the broadcaster is one invocation per batch, with one
 * Query of the board's members and watches per board in the batch and one PostToConnection per
 * watcher and event (measured in bench/delivery.ts); each event frame is one WebSocket message
 * per 32 KB. Its billed duration is its CPU time measured here plus assumed in-region latencies.
 */
export const EVENT_ASSUMPTIONS = {
  /** In-region PostToConnection round trip (not measurable here). A board's watchers are sent each event in parallel. */
  postToConnectionMs: 20,
  /** The Query of members and watches: as any DynamoDB round trip of the model. */
  queryMs: ASSUMPTIONS.dynamoRoundTripMs,
  /** START/END/REPORT only: the broadcaster logs nothing for a delivered batch. */
  logBytesPerInvocation: 350,
  webSocketMeteringBytes: 32 * 1024,
  /** Events per invocation: 1 is the worst case (every change its own batch, as in the sequential runs). */
  eventsPerBatch: [1, 10],
  /** Socket routes' own time per invocation (not measured; the REST routes' is 0.3-0.7 ms). */
  socketOwnMs: 1,
  /** A client sends a ping at least every 10 idle minutes, or API Gateway closes the socket. */
  pingsPerHour: 6,
};

/**
 * What each event-making route of MIX writes for the event log, against the same change written
 * with no event at all: the log item's Put (2 WRU per started KB, in the change's transaction),
 * and the board item's part: `added` where the change did not write the board item before (its
 * Update is 2 WRU per started KB of the board item, label map included), `plain` where it was a
 * plain write that is now transactional (1 more per KB), `transactional` where the transaction
 * already held it (a ConditionCheck, billed like a write, or an Update). `card`: the change's own
 * card write was a plain UpdateItem before and is now in the transaction (1 more per KB).
 */
const LOGGED_WRITES: Record<string, { kind: string; board: 'added' | 'plain' | 'transactional'; card?: true }> = {
  'cards.create': { kind: 'card.created', board: 'transactional' },
  'cards.update': { kind: 'card.updated', board: 'added', card: true },
  'cards.move': { kind: 'card.moved', board: 'transactional' },
  'cards.delete': { kind: 'card.deleted', board: 'added' },
  'columns.create': { kind: 'column.created', board: 'transactional' },
  'boards.rename': { kind: 'board.updated', board: 'plain' },
  'boards.delete': { kind: 'board.deleted', board: 'plain' },
};

/** Storage of the log: 7 days kept, TTL's deletes up to 2 days late (AWS: "typically within 48 hours"). */
export const LOG_STORAGE = {
  retentionDays: 7,
  ttlLagDaysMax: 2,
  daysPerMonth: 30,
  overheadBytesPerItem: 100,
  bytesPerGb: 2 ** 30,
};

export interface LoggedWriteCost {
  route: string;
  share: number;
  kind: string;
  logItemBytes: number;
  logWru: number;
  boardWru: number;
  cardWru: number;
  /** Extra write units per request at the sizes measured here. */
  extraWru: number;
  source: string;
}

export interface EventCostRow {
  watchers: number;
  eventsPerBatch: number;
  billedMsPerInvocation: number;
  messagesPerEvent: number;
  queryRru: number;
  per1000: {
    lambda: number;
    dynamodbReads: number;
    dynamodbLogWrites: number;
    logStorage: number;
    webSocket: number;
    logs: number;
    total: number;
  };
}

export interface EventCostReport {
  assumptions: typeof EVENT_ASSUMPTIONS & { memoryMb: number; storage: typeof LOG_STORAGE };
  /** The sizes measured (bench/delivery.ts). */
  items: ItemSizes;
  log: LoggedWriteCost[];
  /** MIX's event-making routes whose event kind the run did not log (left out of the averages). */
  notMeasured: string[];
  /** Per event, averaged over MIX's event-making routes by their share. */
  extraWruPerEvent: number;
  logItemBytesPerEvent: number;
  /** Dollars: the log's writes and its 7 days of storage, per 1,000 and per 1,000,000 events. */
  perThousandEvents: { writes: number; storage: number; total: number };
  perMillionEvents: { writes: number; storage: number; storageWithTtlLag: number; total: number };
  /** Storage of one event for 7 days, in dollars, and its billed bytes (item + 100). */
  storagePerEvent: { billedBytes: number; dollars: number };
  /** What the log adds to MIX's dollars per million requests (its writes and storage). */
  mixExtraPerMillion: { writes: number; storage: number; total: number };
  rows: EventCostRow[];
  /** One socket: ticket, $connect, one watch (message and ack), $disconnect; then per hour connected. */
  perThousandSessions: number;
  perThousandSocketHours: number;
}

const writeUnits = (bytes: number, transactional: boolean) => (transactional ? 2 : 1) * Math.max(1, Math.ceil(bytes / 1024));

function loggedWriteCosts(log: LogSample[], items: ItemSizes): { costs: LoggedWriteCost[]; notMeasured: string[] } {
  const costs: LoggedWriteCost[] = [];
  const notMeasured: string[] = [];
  for (const [route, share] of Object.entries(MIX)) {
    const logged = LOGGED_WRITES[route];
    if (!logged) continue;
    const sample = log.find((s) => s.kind === logged.kind);
    if (!sample) {
      notMeasured.push(`${route} (${logged.kind})`);
      continue;
    }
    const boardWru =
      logged.board === 'added'
        ? writeUnits(items.board.bytes, true)
        : logged.board === 'plain'
          ? writeUnits(items.board.bytes, true) - writeUnits(items.board.bytes, false)
          : 0;
    const cardWru = logged.card ? items.card.transactionalWru - items.card.plainWru : 0;
    const what = [
      `log Put (${sample.itemBytes} B): ${sample.wru}`,
      logged.board === 'added'
        ? `board Update added (${items.board.bytes} B): ${boardWru}`
        : logged.board === 'plain'
          ? `board write now transactional: +${boardWru}`
          : 'board item already in the transaction: +0',
      ...(logged.card ? [`card Update now transactional (${items.card.bytes} B): +${cardWru}`] : []),
    ];
    costs.push({
      route,
      share,
      kind: logged.kind,
      logItemBytes: sample.itemBytes,
      logWru: sample.wru,
      boardWru,
      cardWru,
      extraWru: sample.wru + boardWru + cardWru,
      source: what.join('; '),
    });
  }
  return { costs, notMeasured };
}

/** The measured broadcaster case closest to (watchers, events): same watchers, nearest batch size. */
function nearestCase(cases: BroadcastCase[], watchers: number, events: number): BroadcastCase | undefined {
  return cases
    .filter((c) => c.watchers === watchers)
    .sort((a, b) => Math.abs(Math.log(a.events / events)) - Math.abs(Math.log(b.events / events)))[0];
}

export function eventCostModel(delivery: DeliveryReport, routes: RouteSummary[], memoryMb: number): EventCostReport {
  const gbSecond = (ms: number, mb = memoryMb) => (mb / 1024) * (ms / 1000) * PRICES.lambdaArm64PerGbSecond;
  const { costs: log, notMeasured } = loggedWriteCosts(delivery.log, delivery.items);
  const share = log.reduce((sum, s) => sum + s.share, 0);
  const perEvent = (f: (s: LoggedWriteCost) => number) =>
    share > 0 ? log.reduce((sum, s) => sum + s.share * f(s), 0) / share : 0;
  const extraWruPerEvent = round(
    perEvent((s) => s.extraWru),
    3,
  );
  const logItemBytesPerEvent = Math.round(perEvent((s) => s.logItemBytes));
  const billedBytes = logItemBytesPerEvent + LOG_STORAGE.overheadBytesPerItem;
  const storageFor = (days: number) =>
    (billedBytes / LOG_STORAGE.bytesPerGb) * PRICES.dynamoStoragePerGbMonth * (days / LOG_STORAGE.daysPerMonth);
  const storagePerEvent = storageFor(LOG_STORAGE.retentionDays);
  const writesPerEvent = extraWruPerEvent * (PRICES.dynamoOnDemandPerMillionWriteUnits / 1e6);
  const mixShare = Object.values(MIX).reduce((sum, v) => sum + v, 0);
  // Events per request of the mix: the share of its requests that make one.
  const eventsPerRequest = share / mixShare;

  const frameBytes = Math.max(delivery.single.frameBytes.max, delivery.fanout?.frameBytes.max ?? 0);
  const messagesPerFrame = Math.max(1, Math.ceil(frameBytes / EVENT_ASSUMPTIONS.webSocketMeteringBytes));
  const rows: EventCostRow[] = [];
  const watcherCounts = [...new Set(delivery.broadcaster.map((c) => c.watchers))].sort((a, b) => a - b);
  for (const watchers of watcherCounts) {
    for (const eventsPerBatch of EVENT_ASSUMPTIONS.eventsPerBatch) {
      const measured = nearestCase(delivery.broadcaster, watchers, eventsPerBatch);
      if (!measured) continue;
      // CPU rather than own time: own time hides the SDK's work for sends in flight together, and
      // that work (one request per watcher, made one after another) is billed too.
      const cpuMs = (measured.cpuMs / measured.events) * eventsPerBatch;
      const billedMs = Math.ceil(cpuMs + EVENT_ASSUMPTIONS.queryMs + eventsPerBatch * EVENT_ASSUMPTIONS.postToConnectionMs);
      const invocations = 1000 / eventsPerBatch;
      const lambda = invocations * (PRICES.lambdaPerMillionRequests / 1e6 + gbSecond(billedMs));
      const dynamodbReads = invocations * measured.queryCapacity * (PRICES.dynamoOnDemandPerMillionReadUnits / 1e6);
      const dynamodbLogWrites = 1000 * writesPerEvent;
      const logStorage = 1000 * storagePerEvent;
      const messagesPerEvent = watchers * messagesPerFrame;
      const webSocket = 1000 * messagesPerEvent * (PRICES.webSocketPerMillionMessages / 1e6);
      const logs = invocations * ((EVENT_ASSUMPTIONS.logBytesPerInvocation / 1e9) * PRICES.cloudWatchLogsPerGbIngested);
      const total = lambda + dynamodbReads + dynamodbLogWrites + logStorage + webSocket + logs;
      const digits = 6;
      rows.push({
        watchers,
        eventsPerBatch,
        billedMsPerInvocation: billedMs,
        messagesPerEvent,
        queryRru: measured.queryCapacity,
        per1000: {
          lambda: round(lambda, digits),
          dynamodbReads: round(dynamodbReads, digits),
          dynamodbLogWrites: round(dynamodbLogWrites, digits),
          logStorage: round(logStorage, digits),
          webSocket: round(webSocket, digits),
          logs: round(logs, digits),
          total: round(total, digits),
        },
      });
    }
  }

  // One socket session. The ticket is a REST route (measured own time); the socket routes' DynamoDB
  // work is read from lib/data/sockets.ts (docs/realtime.md, "What it costs"): $connect DeleteItem
  // (1 WRU) then a transaction of 2 Puts (4), 2 round trips; watch BatchGetItem of the connection
  // (1 RRU), of board and membership (2), then a transaction of Put, Update and ConditionCheck (6),
  // 3 round trips; $disconnect DeleteItem (1) then BatchWriteItem of 2 deletes (2), 2 round trips.
  const ticketOwn = routes.find((r) => r.route === 'realtime.tickets')?.ownMs.p50 ?? EVENT_ASSUMPTIONS.socketOwnMs;
  const invocation = (ownMs: number, roundTrips: number) =>
    PRICES.lambdaPerMillionRequests / 1e6 + gbSecond(Math.ceil(ownMs + roundTrips * ASSUMPTIONS.dynamoRoundTripMs));
  const wru = (units: number) => units * (PRICES.dynamoOnDemandPerMillionWriteUnits / 1e6);
  const rru = (units: number) => units * (PRICES.dynamoOnDemandPerMillionReadUnits / 1e6);
  const session =
    PRICES.httpApiPerMillionRequests / 1e6 +
    invocation(ticketOwn, 1) +
    wru(1) +
    invocation(EVENT_ASSUMPTIONS.socketOwnMs, 2) +
    wru(1 + 4) +
    2 * (PRICES.webSocketPerMillionMessages / 1e6) +
    invocation(EVENT_ASSUMPTIONS.socketOwnMs, 3) +
    rru(1 + 2) +
    wru(6) +
    invocation(EVENT_ASSUMPTIONS.socketOwnMs, 2) +
    wru(1 + 2);
  const socketHour =
    60 * (PRICES.webSocketPerMillionConnectionMinutes / 1e6) +
    EVENT_ASSUMPTIONS.pingsPerHour *
      (2 * (PRICES.webSocketPerMillionMessages / 1e6) + invocation(EVENT_ASSUMPTIONS.socketOwnMs, 0));

  const mixWrites = 1e6 * eventsPerRequest * writesPerEvent;
  const mixStorage = 1e6 * eventsPerRequest * storagePerEvent;
  return {
    assumptions: { ...EVENT_ASSUMPTIONS, memoryMb, storage: LOG_STORAGE },
    items: delivery.items,
    log,
    notMeasured,
    extraWruPerEvent,
    logItemBytesPerEvent,
    perThousandEvents: {
      writes: round(1000 * writesPerEvent, 6),
      storage: round(1000 * storagePerEvent, 8),
      total: round(1000 * (writesPerEvent + storagePerEvent), 6),
    },
    perMillionEvents: {
      writes: round(1e6 * writesPerEvent, 4),
      storage: round(1e6 * storagePerEvent, 5),
      storageWithTtlLag: round(1e6 * storageFor(LOG_STORAGE.retentionDays + LOG_STORAGE.ttlLagDaysMax), 5),
      total: round(1e6 * (writesPerEvent + storagePerEvent), 4),
    },
    storagePerEvent: { billedBytes, dollars: storagePerEvent },
    mixExtraPerMillion: { writes: round(mixWrites, 3), storage: round(mixStorage, 4), total: round(mixWrites + mixStorage, 3) },
    rows,
    perThousandSessions: round(1000 * session, 5),
    perThousandSocketHours: round(1000 * socketHour, 5),
  };
}

/**
 * Webhook deliveries (docs/webhooks.md "Figures"): what 1,000 deliveries cost, each
 * delivered at its first attempt, on top of the change that made the event. Per delivery: the
 * fanout's share (its invocation, its Query of the board's webhooks, the delivery's Put, the
 * SendMessage), then the worker's (SQS receive and delete, BatchGetItem of delivery, webhook and
 * the webhook's WEBHOOK_MAX_IN_FLIGHT lease slots, the claim with a slot as one 2-item transaction,
 * the record and the slot's release, a KMS Decrypt unless cached, its log line and its billed
 * duration, which is mostly the receiver's answer time). Worst case throughout: one event per fanout batch,
 * one webhook per event, one message per worker batch, no secret cached.
 */
export const WEBHOOK_PRICES = {
  /** Standard queue, after the first million requests a month; each 64 KB of a request is one request. */
  sqsPerMillionRequests: 0.4,
  kmsPerRequest: 0.03 / 10_000,
  kmsKeyPerMonth: 1,
};

export const WEBHOOK_ASSUMPTIONS = {
  /** The receiver's answer time as the worker waits for it (not measurable here): the largest part of its bill. */
  receiverMs: 200,
  /** In-region SQS and KMS round trips. */
  sqsMs: 10,
  kmsMs: 8,
  /** The fanout's and the worker's own CPU per message (the REST routes' own time is 0.3-0.7 ms; these do more I/O than work). */
  ownMs: 2,
  /** One attempt's log line plus START/END/REPORT per invocation. */
  logBytes: 650,
  /** Attributes of a delivery item beside its body (keys, ids, status fields, ttl). */
  itemOverheadBytes: 420,
  /** Days a delivery item is stored: 7 kept + about a day of schedule + TTL's up to 2 days late. */
  storedDays: 10,
  /** lib/data/deliveries.ts WEBHOOK_MAX_IN_FLIGHT: lease slots read with every message. */
  leaseSlots: 4,
  /** A lease item (keys, webhook id, slot, held_until, token, delivery_sk, ttl): under 1 KB. */
  leaseItemBytes: 250,
  memoryMb: [128, 256] as const,
};

export interface WebhookCostReport {
  asOf: string;
  rows: { part: string; units: string; dollarsPerThousand: number }[];
  totalPerThousand128: number;
  totalPerThousand256: number;
  /** SQS requests of one delivery that fails every attempt of the default schedule (15-minute hops). */
  hopsOfDefaultSchedule: number;
  notes: string[];
}

export function webhookCostModel(measured: { bodyBytes: number }): WebhookCostReport {
  const a = WEBHOOK_ASSUMPTIONS;
  const itemBytes = measured.bodyBytes + a.itemOverheadBytes;
  const wruPerWrite = Math.ceil(itemBytes / 1024);
  const rcuPerItem = Math.ceil(itemBytes / 4096);
  const perThousand = (dollarsEach: number) => round(dollarsEach * 1000, 6);
  const gbSecond = (ms: number, memoryMb: number) => (ms / 1000) * (memoryMb / 1024) * PRICES.lambdaArm64PerGbSecond;
  const fanoutMs = a.ownMs + 2 * ASSUMPTIONS.dynamoRoundTripMs + a.sqsMs; // Query, Put, SendMessage
  // BatchGet, claim (a transaction), record and release (in parallel: one round trip)
  const workerMs = a.ownMs + 3 * ASSUMPTIONS.dynamoRoundTripMs + a.kmsMs + a.receiverMs;
  const leaseWru = Math.ceil(a.leaseItemBytes / 1024);
  // Put; the claim's transaction (2 WRU per KB of each of its items: the delivery and a slot); the
  // record; the slot's delete.
  const writes = wruPerWrite + 2 * (wruPerWrite + leaseWru) + wruPerWrite + leaseWru;
  const reads = 1 + rcuPerItem + 1 + a.leaseSlots; // fanout Query, BatchGet: delivery + webhook + slots
  const rows = [
    { part: 'table stream read by the change reader (Lambda trigger)', units: 'free', dollarsPerThousand: 0 },
    {
      part: `DynamoDB reads: fanout Query (strongly consistent), worker BatchGetItem (${2 + a.leaseSlots} items: delivery, webhook, ${a.leaseSlots} slots)`,
      units: `${reads} RRU`,
      dollarsPerThousand: perThousand((reads * PRICES.dynamoOnDemandPerMillionReadUnits) / 1e6),
    },
    {
      part: `DynamoDB writes: delivery Put, claim + slot (transaction: 2x), record, slot release (${itemBytes} B item)`,
      units: `${writes} WRU`,
      dollarsPerThousand: perThousand((writes * PRICES.dynamoOnDemandPerMillionWriteUnits) / 1e6),
    },
    {
      part: 'SQS: send, receive, delete',
      units: '3 requests',
      dollarsPerThousand: perThousand((3 * WEBHOOK_PRICES.sqsPerMillionRequests) / 1e6),
    },
    {
      part: 'KMS Decrypt (uncached; cached 5 min per container)',
      units: '≤ 1 request',
      dollarsPerThousand: perThousand(WEBHOOK_PRICES.kmsPerRequest),
    },
    {
      // The fanout runs inside the change reader's invocation (events.broadcast, beside the
      // sockets' broadcaster): only the worker's invocation is the delivery's own.
      part: 'Lambda requests: the worker invocation (the fanout runs in the change reader, beside the sockets)',
      units: '1',
      dollarsPerThousand: perThousand(PRICES.lambdaPerMillionRequests / 1e6),
    },
    {
      part: `Lambda duration, 128 MB arm64 (fanout ≤ ${fanoutMs} ms added to the change reader, beside the broadcaster, + worker ${workerMs} ms, receiver ${a.receiverMs} ms)`,
      units: 'GB-s',
      dollarsPerThousand: perThousand(gbSecond(fanoutMs + workerMs, 128)),
    },
    {
      part: 'CloudWatch Logs',
      units: `${a.logBytes} B`,
      dollarsPerThousand: perThousand((a.logBytes / 2 ** 30) * PRICES.cloudWatchLogsPerGbIngested),
    },
    {
      part: `Storage of the delivery item (${a.storedDays} days)`,
      units: `${itemBytes + LOG_STORAGE.overheadBytesPerItem} B`,
      dollarsPerThousand: perThousand(
        ((itemBytes + LOG_STORAGE.overheadBytesPerItem) / LOG_STORAGE.bytesPerGb) *
          PRICES.dynamoStoragePerGbMonth *
          (a.storedDays / LOG_STORAGE.daysPerMonth),
      ),
    },
  ];
  const base = rows.reduce((sum, row) => sum + row.dollarsPerThousand, 0);
  const extra256 = perThousand(gbSecond(fanoutMs + workerMs, 256) - gbSecond(fanoutMs + workerMs, 128));
  // Every delay of the default schedule waits in hops of at most 15 minutes (SQS's longest delay).
  const hops = [5, 300, 1800, 7200, 18000, 36000, 36000].reduce((sum, d) => sum + Math.ceil(d / 900), 0);
  return {
    asOf: PRICES.asOf,
    rows,
    totalPerThousand128: round(base, 6),
    totalPerThousand256: round(base + extra256, 6),
    hopsOfDefaultSchedule: hops,
    notes: [
      `A delivery that fails all 8 attempts of the default schedule: 7 more attempts (their claim and record writes, invocations and receiver waits) and ${hops} queue hops of ≤ 15 min, ${hops * 3} SQS requests ($${round(hops * 3 * WEBHOOK_PRICES.sqsPerMillionRequests * 1e-6 * 1000, 4)} per 1,000 such deliveries).`,
      `A receiver that never answers bills the worker its full 10 s: $${round(gbSecond(10_000, 128) * 1000, 4)} per 1,000 such attempts at 128 MB.`,
      `Every hop (a wait, or a message deferred because its webhook has all ${a.leaseSlots} slots held) reads the ${a.leaseSlots} slots too; a deferral costs a BatchGetItem (${2 + a.leaseSlots} RRU), 3 SQS requests and ~${a.ownMs + ASSUMPTIONS.dynamoRoundTripMs + a.sqsMs} ms of the worker: $${round(((2 + a.leaseSlots) * PRICES.dynamoOnDemandPerMillionReadUnits * 1e-6 + 3 * WEBHOOK_PRICES.sqsPerMillionRequests * 1e-6 + gbSecond(a.ownMs + ASSUMPTIONS.dynamoRoundTripMs + a.sqsMs, 128)) * 1000, 4)} per 1,000 deferrals.`,
      `Fixed: the KMS key $${WEBHOOK_PRICES.kmsKeyPerMonth}/month; Lambda's SQS pollers' empty long polls (~5 pollers, one ReceiveMessage per 20 s each: ~650,000 requests, about $0.26/month).`,
    ],
  };
}
