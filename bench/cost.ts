import type { RouteSummary } from './client';
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
  cloudWatchLogsPerGbIngested: 0.5,
  xrayPerMillionTracesRecorded: 5.0,
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
 * plus the LSI entry written or removed (assumed billed at the transactional rate).
 */
export const UNIT_MODEL: Record<string, (measured: number) => { rru: number; wru: number; source: string }> = {
  health: () => ({ rru: 0, wru: 0, source: 'no table access' }),
  'auth.login': () => ({ rru: 0, wru: 0, source: 'no table access' }),
  'auth.register': () => ({ rru: 0, wru: 4, source: 'model: transaction of 2 Puts' }),
  'boards.list': (m) => ({ rru: m, wru: 0, source: 'measured' }),
  'boards.get': (m) => ({ rru: m, wru: 0, source: 'measured' }),
  'cards.get': (m) => ({ rru: m, wru: 0, source: 'measured' }),
  'boards.rename': (m) => ({ rru: 2, wru: m - 2, source: 'measured (BatchGetItem of 2 = 2 RRU)' }),
  'cards.update': (m) => ({ rru: 4, wru: m - 4, source: 'measured (2 BatchGetItem = 4 RRU)' }),
  'boards.delete': (m) => ({ rru: 3, wru: m - 3, source: 'measured (BatchGetItem 2 + Query 1 RRU)' }),
  'boards.create': () => ({ rru: 0, wru: 6, source: 'model: transaction of 3 Puts' }),
  'columns.create': () => ({ rru: 3, wru: 6, source: 'model: 2 reads + Query; transaction of 2 Puts + 1 Update' }),
  'cards.create': () => ({
    rru: 5,
    wru: 12,
    source: 'model: 4 reads + LSI Query; transaction of 2 Puts, 1 Update, 2 ConditionChecks + LSI entry',
  }),
  'cards.delete': () => ({ rru: 4, wru: 6, source: 'model: 4 reads; transaction of 2 Deletes + LSI entry' }),
  'cards.move': () => ({
    rru: 8,
    wru: 10,
    source: 'model: 6-10 reads (half with neighbours); transaction of 1 Update, 2 ConditionChecks + 2 LSI entries',
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
    const billedMs = Math.ceil(serviceMs + r.sequential.median * ASSUMPTIONS.dynamoRoundTripMs + cognito);
    const units = UNIT_MODEL[route]?.(r.capacity.median) ?? { rru: r.capacity.median, wru: 0, source: 'measured' };
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
