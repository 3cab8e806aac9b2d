import autocannon from 'autocannon';
import type { Client } from './client';
import { type BoardFixture, DESCRIPTION_200, makeBoard } from './latency';
import { log, round } from './util';

/**
 * Part 4: throughput of the local stack under concurrent load, autocannon's programmatic API
 * against 127.0.0.1 only, for a bounded time. Each request draws its operation from a weighted
 * mix. One process serves every route here (on AWS each route has its own functions), so this is
 * the local stack's throughput, not the deployed service's: it compares runs, not deployments.
 */

interface Operation {
  name: string;
  weight: number;
  request: () => { method: 'GET' | 'POST' | 'PATCH'; path: string; body?: string };
}

export interface LoadReport {
  mix: string;
  weights: Record<string, number>;
  connections: number;
  durationS: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
}

const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)]!;

async function runMix(url: string, token: string, mix: string, operations: Operation[], connections: number, durationS: number) {
  const total = operations.reduce((sum, op) => sum + op.weight, 0);
  const draw = () => {
    let r = Math.random() * total;
    for (const op of operations) {
      r -= op.weight;
      if (r < 0) return op;
    }
    return operations[operations.length - 1]!;
  };
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`load is only ever sent to this machine, not ${host}`);
  log(`load: ${mix}, ${connections} connections, ${durationS} s`);
  const result = await autocannon({
    url,
    connections,
    duration: durationS,
    timeout: 30,
    requests: [
      {
        setupRequest: (request) => {
          const { method, path, body } = draw().request();
          return {
            ...request,
            method,
            path,
            body,
            headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          };
        },
      },
    ],
  });
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]));
  return {
    mix,
    weights: Object.fromEntries(operations.map((op) => [op.name, round(op.weight / total, 3)])),
    connections,
    durationS: round(result.duration, 1),
    requests: result.requests.total,
    requestsPerSecond: round(result.requests.total / result.duration, 0),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    statusCodes,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  } satisfies LoadReport;
}

export async function benchLoad(
  client: Client,
  token: string,
  board: BoardFixture,
  connections: number,
  durationS: number,
): Promise<LoadReport[]> {
  // Creates go to a board of their own with 16 columns, spread as a board's users would spread
  // them; every write of one board still takes its turn (its event log numbers them one by one),
  // so the write-heavy mix measures two busy boards, not independent writes.
  const writeBoard = await makeBoard(client, token, 16, 0, DESCRIPTION_200);
  const title = () => JSON.stringify({ title: `Load ${Math.random().toString(36).slice(2, 8)}` });
  const readHeavy: Operation[] = [
    { name: 'GET /cards/{id}', weight: 50, request: () => ({ method: 'GET', path: `/cards/${pick(board.cards)}` }) },
    { name: 'GET /boards/{id} (100 cards)', weight: 25, request: () => ({ method: 'GET', path: `/boards/${board.id}` }) },
    { name: 'GET /boards', weight: 15, request: () => ({ method: 'GET', path: '/boards' }) },
    {
      name: 'PATCH /cards/{id}',
      weight: 10,
      request: () => ({ method: 'PATCH', path: `/cards/${pick(board.cards)}`, body: title() }),
    },
  ];
  const writeHeavy: Operation[] = [
    {
      name: 'POST /columns/{id}/cards',
      weight: 30,
      request: () => ({
        method: 'POST',
        path: `/columns/${pick(writeBoard.columns)}/cards`,
        body: JSON.stringify({ title: 'Load card', description: DESCRIPTION_200 }),
      }),
    },
    {
      name: 'PATCH /cards/{id}',
      weight: 30,
      request: () => ({ method: 'PATCH', path: `/cards/${pick(board.cards)}`, body: title() }),
    },
    {
      name: 'PATCH /cards/{id}/move',
      weight: 20,
      request: () => ({
        method: 'PATCH',
        path: `/cards/${pick(board.cards)}/move`,
        body: JSON.stringify({ target_column_id: pick(board.columns) }),
      }),
    },
    { name: 'GET /cards/{id}', weight: 20, request: () => ({ method: 'GET', path: `/cards/${pick(board.cards)}` }) },
  ];
  return [
    await runMix(client.baseUrl, token, 'read-heavy', readHeavy, connections, durationS),
    await runMix(client.baseUrl, token, 'write-heavy', writeHeavy, connections, durationS),
  ];
}
