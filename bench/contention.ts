import { pathToFileURL } from 'node:url';
import { type Answer, Client } from './client';
import { onOwnStack } from './own-stack';
import { log, max, median, percentile, pool, round } from './util';

/**
 * Writers racing on one board (the board's event log numbers every change): every write of a board is serialised by something —
 * creates into one column by the column's card-create version, and, since the event log, every
 * write of the board by its `seq` — and a write that loses a race runs again. This phase measures
 * what that costs a write: N concurrent writers, each doing K writes one after another,
 * - hot column: every writer appends cards to the same column (POST /columns/{id}/cards);
 * - hot board: every writer edits its own card of one board (PATCH /cards/{id}), so that nothing
 *   but the board itself is shared.
 * Per write: the wall time the client saw, and the DynamoDB calls the trace headers count (a lost
 * race costs more calls). Then a batch of card creates against single creates (BatchCase). It
 * runs on a local stack of its own, with a user quota that no writer
 * reaches: the rate limiter's count is then one of the calls counted, as it is deployed (and a
 * waiter's read budget counts it). Runs standalone too (`node --import tsx bench/contention.ts`),
 * so that the same file can be run against an older commit for a before/after.
 */

export interface ContentionCase {
  writers: number;
  writesPerWriter: number;
  statuses: Record<string, number>;
  wallMs: { p50: number; p99: number; max: number };
  calls: { p50: number; p99: number; max: number; mean: number };
  /** Calls per write by DynamoDB command, on average: where a contended write's calls go. */
  callsByCommand: Record<string, number>;
  /** The DynamoDB commands of the write that made the most calls, in order. */
  costliest: string;
  writesPerSecond: number;
}

/** One number of writers: both cases. */
export interface ContentionRun {
  writers: number;
  hotColumn: ContentionCase;
  hotBoard: ContentionCase;
}

/** Every number of writers measured (1, 4, 16 and 32 by default), each on boards of its own. */
export interface ContentionReport {
  runs: ContentionRun[];
  /** A batch of card creates against single creates, on the same stack (absent from older results). */
  batch?: BatchCase;
}

/**
 * POST /boards/{id}/batch with 25 card creates against the same creates sent one by one (the
 * busy-boards contract: at most 3 sequential round trips, and per card at most a tenth of a
 * single create's time). Rounds alternate a few single creates with one batch, on one idle board,
 * so that both meet the machine as it is at that moment.
 */
export interface BatchCase {
  cardsPerBatch: number;
  statuses: Record<string, number>;
  batches: { n: number; p50Ms: number; maxMs: number };
  singles: { n: number; p50Ms: number };
  /** A batch's p50 over its cards, and that against a single create's p50. */
  perCardMs: number;
  ratio: number;
  /** The most sequential round trips and calls any batch made (trace headers). */
  sequentialMax: number;
  callsMax: number;
  /** Where a batch's time goes, p50: waiting on DynamoDB, and the service's own work. */
  batchDynamoMs: number;
  batchOwnMs: number;
}

/** Answers counted by status; a failure says which by its problem's detail (the deadline, StorageBusy...). */
function statusesOf(answers: Answer[]): Record<string, number> {
  const statuses: Record<string, number> = {};
  for (const answer of answers) {
    const key =
      answer.status < 400 ? String(answer.status) : `${answer.status} ${String(answer.body?.detail ?? '').slice(0, 60)}`;
    statuses[key] = (statuses[key] ?? 0) + 1;
  }
  return statuses;
}

async function race(
  writers: number,
  writesPerWriter: number,
  write: (writer: number, k: number) => Promise<Answer>,
): Promise<ContentionCase> {
  const answers: Answer[] = [];
  const started = performance.now();
  await pool(
    Array.from({ length: writers }, (_, i) => i),
    writers,
    async (writer) => {
      for (let k = 0; k < writesPerWriter; k++) answers.push(await write(writer, k));
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const statuses = statusesOf(answers);
  const walls = answers.map((a) => a.wallMs);
  const calls = answers.map((a) => a.trace?.calls ?? Number.NaN).filter(Number.isFinite);
  const byCommand: Record<string, number> = {};
  for (const answer of answers) {
    for (const command of (answer.trace?.commands ?? '').split(',').filter(Boolean)) {
      byCommand[command] = (byCommand[command] ?? 0) + 1;
    }
  }
  const costliest = answers.reduce<Answer | undefined>(
    (most, answer) => ((answer.trace?.calls ?? 0) > (most?.trace?.calls ?? -1) ? answer : most),
    undefined,
  )?.trace?.commands;
  const callsByCommand = Object.fromEntries(
    Object.entries(byCommand).map(([command, n]) => [command, round(n / Math.max(1, answers.length), 2)]),
  );
  return {
    writers,
    writesPerWriter,
    statuses,
    wallMs: { p50: round(median(walls), 1), p99: round(percentile(walls, 99), 1), max: round(max(walls), 1) },
    calls: {
      p50: median(calls),
      p99: percentile(calls, 99),
      max: max(calls),
      mean: round(calls.reduce((sum, n) => sum + n, 0) / Math.max(1, calls.length), 2),
    },
    callsByCommand,
    costliest: costliest ?? '',
    writesPerSecond: round(answers.length / seconds, 1),
  };
}

export async function benchContention(writerCounts: number[], writesPerWriter: number): Promise<ContentionReport> {
  // INFO logging, as deployed: the request log line is part of the service's own time. Calls are
  // traced without asking DynamoDB for their capacity, which the deployed service never asks for
  // and which costs DynamoDB Local a sixth more on a batch's transaction (infra/local/trace.ts).
  const env = {
    TASK_BOARD_TRACE: 'calls',
    LOG_LEVEL: 'INFO',
    RATE_LIMIT_REQUESTS: String(QUOTA_NOBODY_REACHES),
    RATE_LIMIT_WINDOW_SECONDS: '60',
    // DynamoDB Local as `npm start` runs it (infra/local/dynamodb.ts), warmed up before anything is timed.
    DYNAMODB_COMPILER: 'tiered',
  };
  return onOwnStack('contention', env, async (stack) => {
    const client = new Client(stack.url);
    log(`contention: warming up (${WARM_UP_ROUNDS} rounds of every case, not counted)`);
    for (let round = 0; round < WARM_UP_ROUNDS; round++) {
      await contentionOf(client, 16, 5);
      await batchAgainstSingles(client);
    }
    const runs: ContentionRun[] = [];
    for (const writers of writerCounts) runs.push({ writers, ...(await contentionOf(client, writers, writesPerWriter)) });
    return { runs, batch: await batchAgainstSingles(client) };
  });
}

/** A user quota per minute far above what the phase's writers send: counted, never refused. */
const QUOTA_NOBODY_REACHES = 1_000_000;

/** Rounds of the cases before the timed ones: the JIT's optimizing compiler has compiled what they run by then. */
const WARM_UP_ROUNDS = 2;

/** A writer alone is the throughput the others are held to: enough of its writes for a steady rate. */
const WRITES_ALONE_AT_LEAST = 30;

async function contentionOf(client: Client, writers: number, writesEach: number): Promise<Omit<ContentionRun, 'writers'>> {
  const writesPerWriter = writers === 1 ? Math.max(WRITES_ALONE_AT_LEAST, writesEach) : writesEach;
  const { token } = await client.register('contention');
  const board = (await client.expect(201, 'POST', '/boards', { token, body: { title: 'Contention' } })).body.id as string;
  const column = (await client.expect(201, 'POST', `/boards/${board}/columns`, { token, body: { title: 'Hot' } })).body
    .id as string;

  log(`contention: ${writers} writers x ${writesPerWriter} creates into one column`);
  const hotColumn = await race(writers, writesPerWriter, (writer, k) =>
    client.send('POST', `/columns/${column}/cards`, { token, body: { title: `W${writer} #${k}` } }),
  );

  const editBoard = (await client.expect(201, 'POST', '/boards', { token, body: { title: 'Contention edits' } })).body
    .id as string;
  const editColumn = (await client.expect(201, 'POST', `/boards/${editBoard}/columns`, { token, body: { title: 'Edits' } })).body
    .id as string;
  const cards: string[] = [];
  for (let i = 0; i < writers; i++) {
    cards.push(
      (await client.expect(201, 'POST', `/columns/${editColumn}/cards`, { token, body: { title: `Card ${i}` } })).body.id,
    );
  }
  log(`contention: ${writers} writers x ${writesPerWriter} edits of their own card of one board`);
  const hotBoard = await race(writers, writesPerWriter, (writer, k) =>
    client.send('PATCH', `/cards/${cards[writer]}`, { token, body: { title: `Edit ${k}` } }),
  );
  return { hotColumn, hotBoard };
}

/** The batch route's limit: the contract's batch is a full one. */
const CARDS_PER_BATCH = 25;
const BATCH_ROUNDS = 10;
const SINGLES_PER_ROUND = 3;

async function batchAgainstSingles(client: Client): Promise<BatchCase> {
  const { token } = await client.register('batch');
  const board = (await client.expect(201, 'POST', '/boards', { token, body: { title: 'Batch' } })).body.id as string;
  const singleColumn = (await client.expect(201, 'POST', `/boards/${board}/columns`, { token, body: { title: 'One by one' } }))
    .body.id as string;
  const batchColumn = (await client.expect(201, 'POST', `/boards/${board}/columns`, { token, body: { title: 'Batched' } })).body
    .id as string;
  log(`contention: ${BATCH_ROUNDS} batches of ${CARDS_PER_BATCH} creates against ${SINGLES_PER_ROUND} single creates each round`);
  const singles: Answer[] = [];
  const batches: Answer[] = [];
  for (let lap = 0; lap < BATCH_ROUNDS; lap++) {
    for (let k = 0; k < SINGLES_PER_ROUND; k++) {
      singles.push(
        await client.expect(201, 'POST', `/columns/${singleColumn}/cards`, { token, body: { title: `One ${lap}.${k}` } }),
      );
    }
    batches.push(
      await client.send('POST', `/boards/${board}/batch`, {
        token,
        body: {
          operations: Array.from({ length: CARDS_PER_BATCH }, (_, i) => ({
            op: 'card.create',
            column_id: batchColumn,
            title: `Batched ${lap}.${i}`,
          })),
        },
      }),
    );
  }
  const statuses = statusesOf(batches);
  const batchWalls = batches.map((a) => a.wallMs);
  const singleP50 = median(singles.map((a) => a.wallMs));
  const perCard = median(batchWalls) / CARDS_PER_BATCH;
  return {
    cardsPerBatch: CARDS_PER_BATCH,
    statuses,
    batches: { n: batches.length, p50Ms: round(median(batchWalls), 1), maxMs: round(max(batchWalls), 1) },
    singles: { n: singles.length, p50Ms: round(singleP50, 1) },
    perCardMs: round(perCard, 2),
    ratio: round(perCard / singleP50, 3),
    sequentialMax: max(batches.map((a) => a.trace?.sequential ?? Number.NaN)),
    callsMax: max(batches.map((a) => a.trace?.calls ?? Number.NaN)),
    batchDynamoMs: round(median(batches.map((a) => a.trace?.dynamoMs ?? Number.NaN)), 1),
    batchOwnMs: round(median(batches.map((a) => a.trace?.ownMs ?? Number.NaN)), 1),
  };
}

export function renderContention(r: ContentionReport): string[] {
  const rows = r.runs.flatMap((run) => [
    row('hot column (creates)', run.hotColumn),
    row('hot board (edits of own cards)', run.hotBoard),
  ]);
  return [
    '## Writers racing on one board (DynamoDB Local)',
    '| case | writers × writes | answers | p50 ms | p99 ms | max ms | DynamoDB calls per write p50 / p99 / max | calls per write by command (mean) | writes/s |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    ...(r.batch ? ['', ...renderBatch(r.batch)] : []),
  ];
}

function renderBatch(b: BatchCase): string[] {
  return [
    `### A batch of ${b.cardsPerBatch} card creates against single creates (one idle board, rounds alternating)`,
    '| case | requests | answers | p50 ms | max ms | per card ms | sequential round trips (max) | calls (max) | p50 waiting on DynamoDB / own ms |',
    '|---|---|---|---|---|---|---|---|---|',
    `| POST /boards/{id}/batch, ${b.cardsPerBatch} card.create | ${b.batches.n} | ${answersByStatus(b.statuses)} | ${b.batches.p50Ms} | ${b.batches.maxMs} | ${b.perCardMs} (${b.ratio}× a single create) | ${b.sequentialMax} | ${b.callsMax} | ${b.batchDynamoMs} / ${b.batchOwnMs} |`,
    `| POST /columns/{id}/cards | ${b.singles.n} | ${b.singles.n}× 201 | ${b.singles.p50Ms} | | ${b.singles.p50Ms} | | | |`,
  ];
}

/** Answers by status, as the tables and the report's targets show them: `160× 201`. */
export const answersByStatus = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([status, n]) => `${n}× ${status}`)
    .join(', ');

function row(name: string, c: ContentionCase): string {
  return `| ${name} | ${c.writers} × ${c.writesPerWriter} | ${answersByStatus(c.statuses)} | ${c.wallMs.p50} | ${c.wallMs.p99} | ${c.wallMs.max} | ${c.calls.p50} / ${c.calls.p99} / ${c.calls.max} (mean ${c.calls.mean}) | ${byCommand(c)} | ${c.writesPerSecond} |`;
}

function byCommand(c: ContentionCase): string {
  return Object.entries(c.callsByCommand ?? {})
    .sort(([, a], [, b]) => b - a)
    .map(([command, n]) => `${command} ${n}`)
    .join(', ');
}

// Standalone: the result as JSON on stdout (BENCH_WRITERS: a list, BENCH_WRITES).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { envNumber } = await import('./util');
  const writers = (process.env.BENCH_WRITERS ?? '1,4,16,32').split(',').map(Number);
  const report = await benchContention(writers, envNumber('BENCH_WRITES', 10));
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n${renderContention(report).join('\n')}\n`);
  process.exit(0);
}
