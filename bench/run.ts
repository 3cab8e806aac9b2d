import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { answerArguments } from '../scripts/cli';
import { type RunningStack, startStackProcess, stopStackProcess } from '../test/support/local-process';
import { benchBundles } from './bundles';
import { benchCardDetails } from './card-details';
import { benchCatchUp } from './catchup';
import { Client } from './client';
import { benchConditional } from './conditional';
import { benchContention } from './contention';
import { costModel, eventCostModel } from './cost';
import { benchDelivery } from './delivery';
import { benchLatency } from './latency';
import { benchLoad } from './load';
import { stackDataDir } from './own-stack';
import { evaluateTargets, type Results, renderMarkdown } from './report';
import { benchScale } from './scale';
import { envNumber, loadAverage, log, REPO_ROOT, round } from './util';
import { benchWebhooks, renderWebhooks, type WebhookBench } from './webhooks';

/**
 * `npm run bench`: the performance benchmark, on the local stack (docs/performance.md).
 * 1. bundles as `cdk synth` makes them, and their cold import against an SDK-only bundle;
 * 2-3. round trips, capacity and own time per route (sequential warm requests, trace headers);
 * 4. throughput under concurrent load (autocannon);
 * 4b. conditional: boards of 50, 500 and 5,000 cards re-read in full (200) and with If-None-Match
 *    (304), read units and latency side by side;
 * 5. scale: 500- and 5,000-card trees and their bytes on the wire per encoding, deleting them and a
 *    50,000-card board, listing 1,000 boards;
 * 6. live board events: delivery latency to one watcher and to 20, the broadcaster's own work, the
 *    event log's items (sizes, write units);
 * 7. contention: N writers racing on one board (creates into one column, edits of their own cards);
 * 8. catch-up: 1,000 changes on a board read back through GET /boards/{id}/events, limit 1000 and 100;
 * 9. webhooks: delivery latency, REST answer → receiver on 127.0.0.1 (BENCH_WEBHOOK_EVENTS, default
 *    240), and the cost per 1,000 deliveries (bench/webhooks.ts, bench/cost.ts webhookCostModel).
 * 10. details: a 100-card tree with and without 1,000 comments and 1,000 archived cards beside it,
 *    unfiltered and with each filter, and the round trips and units of the card-detail routes
 *    (bench/card-details.ts).
 * Prints markdown, writes bench/results/latest.json and latest.md (a run with BENCH_SKIP writes
 * partial-<UTC date and time>.json and .md instead, so that it never replaces the full run the
 * documents quote; BENCH_OUT=<name> picks the name). CI never runs it.
 *
 * Knobs (environment): BENCH_REQUESTS (default 1000 per main route), BENCH_OTHER_REQUESTS (200),
 * BENCH_IMPORT_RUNS (15), BENCH_LARGE_BOARD (5000 cards), BENCH_SMALL_BOARD (500), BENCH_HUGE_BOARD
 * (50000 cards, only deleted), BENCH_HUGE_SEED=direct (write its cards straight into the table
 * instead of through the batch route: seconds instead of minutes),
 * BENCH_LIST_BOARDS (1000), BENCH_LOAD_SECONDS (5), BENCH_CONNECTIONS (16), BENCH_SEED=http (seed the
 * large board by single creates too, instead of through POST /boards/{id}/batch), BENCH_KEEP=1 keeps
 * the synthesized bundles, BENCH_DELIVERY_CHANGES (240 changes to one watcher), BENCH_FANOUT_CHANGES
 * (60) and BENCH_FANOUT_WATCHERS (20), BENCH_WRITERS (1,4,16,32: the numbers of concurrent writers) and BENCH_WRITES (10
 * writes each) of the contention phase, BENCH_CATCHUP_EVENTS (1000 changes to catch up on),
 * BENCH_CONDITIONAL_RUNS (15 re-reads of each board each way in the conditional phase),
 * BENCH_DETAILS_RUNS (50 reads of each tree each way in the details phase), BENCH_DETAILS_ROUTE_RUNS
 * (20 of each card-detail route), BENCH_DETAILS_COMMENTS and BENCH_DETAILS_ARCHIVED (1000 each),
 * BENCH_DETAILS_PARALLELISM (8 seeding writers),
 * BENCH_SKIP=bundles,latency,delivery,contention,catchup,load,conditional,scale,huge,webhooks,details leaves phases
 * out (for trying the bench; `huge` is the 50,000-card board of the scale phase; without `latency`
 * there is no load phase and no cost model).
 */

const USAGE = `usage: [BENCH_…=…] npm run bench

Benchmarks the service on a local stack of its own (a temporary DATA_DIR, removed at the end) and
writes bench/results/latest.json and latest.md; docs/performance.md says what each phase measures.
Phases: bundles, latency, delivery, load, conditional, scale (huge: its 50,000-card board), contention,
catchup, webhooks, details. It takes 15-20 minutes on a quiet 2-core machine, far longer under load; CI
never runs it.

Settings are environment variables, for instance:
  BENCH_SKIP=bundles,load,scale   leave phases out (the run is then written as partial-<time>.*)
  BENCH_REQUESTS=1000             sequential requests per main route (BENCH_OTHER_REQUESTS: 200)
  BENCH_OUT=<name>                write bench/results/<name>.json and .md instead
The others are listed at the top of bench/run.ts.

  -h, --help   this text`;
answerArguments(USAGE);

const settings = {
  requests: envNumber('BENCH_REQUESTS', 1000),
  otherRequests: envNumber('BENCH_OTHER_REQUESTS', 200),
  importRuns: envNumber('BENCH_IMPORT_RUNS', 15),
  largeBoard: envNumber('BENCH_LARGE_BOARD', 5000),
  smallBoard: envNumber('BENCH_SMALL_BOARD', 500),
  /** Seeded like the large board and deleted, to time the deletion of a board past one request's reach. */
  hugeBoard: envNumber('BENCH_HUGE_BOARD', 50_000),
  listBoards: envNumber('BENCH_LIST_BOARDS', 1000),
  loadSeconds: envNumber('BENCH_LOAD_SECONDS', 5),
  connections: envNumber('BENCH_CONNECTIONS', 16),
  seedWriters: 20,
  /** The large board's cards: through the batch route (default, seconds) or by single creates (minutes here). */
  seed: process.env.BENCH_SEED === 'http' ? ('http' as const) : ('batch' as const),
  /** The huge board's cards: through the batch route (default, minutes) or straight into the table. */
  hugeSeed: process.env.BENCH_HUGE_SEED === 'direct' ? ('direct' as const) : ('batch' as const),
  treeRuns: 7,
  /** Boards re-read in full and with If-None-Match, and how many times each way. */
  conditionalBoards: [50, 500, envNumber('BENCH_LARGE_BOARD', 5000)],
  conditionalRuns: envNumber('BENCH_CONDITIONAL_RUNS', 15),
  delivery: {
    changes: envNumber('BENCH_DELIVERY_CHANGES', 240),
    fanoutChanges: envNumber('BENCH_FANOUT_CHANGES', 60),
    fanoutWatchers: envNumber('BENCH_FANOUT_WATCHERS', 20),
  },
  contention: {
    writers: (process.env.BENCH_WRITERS ?? '1,4,16,32').split(',').map(Number),
    writes: envNumber('BENCH_WRITES', 10),
  },
  catchUpEvents: envNumber('BENCH_CATCHUP_EVENTS', 1000),
  webhookEvents: envNumber('BENCH_WEBHOOK_EVENTS', 240),
  details: {
    runs: envNumber('BENCH_DETAILS_RUNS', 50),
    routeRuns: envNumber('BENCH_DETAILS_ROUTE_RUNS', 20),
    comments: envNumber('BENCH_DETAILS_COMMENTS', 1000),
    archived: envNumber('BENCH_DETAILS_ARCHIVED', 1000),
    parallelism: envNumber('BENCH_DETAILS_PARALLELISM', 8),
  },
};

const started = performance.now();
const results: Results = {
  meta: {
    startedAt: new Date().toISOString(),
    node: process.version,
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
    platform: `${process.platform} ${process.arch}`,
    settings,
    loadAverage: { start: loadAverage(), end: [] as number[] },
  },
  errors: [],
  targets: [],
};

async function phase<T>(name: string, work: () => Promise<T>): Promise<T | undefined> {
  const t = performance.now();
  log(`phase ${name}`);
  try {
    return await work();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // The first line says what failed, the end of a tool's output says why.
    const [first, ...rest] = message.split('\n');
    const tail = rest.join('\n').slice(-1500);
    results.errors.push({ phase: name, message: tail ? `${first}\n…\n${tail}` : (first ?? '') });
    log(`phase ${name} FAILED: ${message}`);
    return undefined;
  } finally {
    (results.meta as { phaseSeconds?: Record<string, number> }).phaseSeconds ??= {};
    (results.meta as { phaseSeconds: Record<string, number> }).phaseSeconds[name] = round((performance.now() - t) / 1000, 1);
  }
}

const skip = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
results.meta.skipped = [...skip];
if (!skip.has('bundles')) results.bundles = await phase('bundles', () => benchBundles(settings.importRuns));

const dataDir = stackDataDir('bench');
let stack: RunningStack | undefined;
let webhooks: WebhookBench | undefined;
try {
  stack = await phase('start local stack', () =>
    // INFO logging, as deployed: the request log line is part of the service's own time.
    // The socket sweeper every minute, as scheduled on AWS (locally every second by default, for tests).
    startStackProcess(dataDir, { TASK_BOARD_TRACE: '1', LOG_LEVEL: 'INFO', LOCAL_SWEEP_MS: '60000' }),
  );
  if (stack) {
    const client = new Client(stack.url);
    const running = stack;
    if (!skip.has('latency'))
      results.latency = await phase('latency', () =>
        benchLatency(client, settings.requests, settings.otherRequests, settings.listBoards),
      );
    // Before the load phase: the stream must not still be working through its backlog.
    if (!skip.has('delivery'))
      results.delivery = await phase('delivery', () => benchDelivery(client, dataDir, settings.delivery));
    const fixtures = results.latency?.fixtures;
    if (fixtures && !skip.has('load')) {
      results.load = await phase('load', () =>
        benchLoad(client, fixtures.token, fixtures.board, settings.connections, settings.loadSeconds),
      );
    }
    if (!skip.has('conditional'))
      results.conditional = await phase('conditional', () =>
        benchConditional(client, settings.conditionalBoards, settings.seedWriters, settings.conditionalRuns),
      );
    if (!skip.has('scale'))
      results.scale = await phase('scale', () =>
        benchScale(
          client,
          dataDir,
          running.child.pid,
          { small: settings.smallBoard, large: settings.largeBoard, huge: skip.has('huge') ? undefined : settings.hugeBoard },
          settings.seedWriters,
          settings.treeRuns,
          settings.seed,
          settings.hugeSeed,
        ),
      );
    // Last: the stream works through their 1,500 or so log items for a while after them, and the
    // load and scale phases should not run beside that backlog. On a stack of its own, with a user
    // quota (bench/contention.ts says why).
    if (!skip.has('contention'))
      results.contention = await phase('contention', () =>
        benchContention(settings.contention.writers, settings.contention.writes),
      );
    if (!skip.has('catchup')) results.catchUp = await phase('catch-up', () => benchCatchUp(client, settings.catchUpEvents));
    if (!skip.has('webhooks')) {
      webhooks = await phase('webhooks', () => benchWebhooks(running.url, settings.webhookEvents));
      if (webhooks) webhooks.loadAverage = loadAverage();
    }
    // After the others: its 3,000 or so seeding writes leave the stream a backlog of log items.
    if (!skip.has('details')) results.details = await phase('details', () => benchCardDetails(client, dataDir, settings.details));
  }
} finally {
  if (stack) await stopStackProcess(stack.child);
  rmSync(dataDir, { recursive: true, force: true });
}

if (results.latency) {
  const memoryMb = results.bundles?.routes.find((r) => r.memorySize)?.memorySize ?? 1024;
  results.cost = costModel(results.latency.routes, memoryMb);
  if (results.delivery) results.eventCost = eventCostModel(results.delivery, results.latency.routes, memoryMb);
  // The fixtures hold a token: keep ids and counts only.
  results.latency.fixtures.token = '(omitted)';
}
results.targets = evaluateTargets(results);
Object.assign(results.meta, { durationS: round((performance.now() - started) / 1000, 1) });
(results.meta.loadAverage as { end: number[] }).end = loadAverage();

if (webhooks) (results as Results & { webhooks?: WebhookBench }).webhooks = webhooks;
const markdown = renderMarkdown(results) + (webhooks ? `\n${renderWebhooks(webhooks)}` : '');
const outDir = join(REPO_ROOT, 'bench', 'results');
mkdirSync(outDir, { recursive: true });
// Only a full run replaces latest.*, which docs/performance.md quotes.
const outName =
  process.env.BENCH_OUT || (skip.size > 0 ? `partial-${String(results.meta.startedAt).slice(0, 16).replace(':', '')}` : 'latest');
writeFileSync(join(outDir, `${outName}.json`), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(join(outDir, `${outName}.md`), markdown);
process.stdout.write(markdown);
log(`wrote bench/results/${outName}.json and ${outName}.md in ${(results.meta as { durationS: number }).durationS} s`);
process.exit(results.errors.length > 0 ? 1 : 0);
