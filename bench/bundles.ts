import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { functionIdOf } from '../infra/api-function';
import {
  poolTriggers,
  queueConsumers,
  type RouteId,
  routeIds,
  routes,
  schedules,
  socketRoutes,
  streamConsumers,
} from '../lib/routes';
import { DEPLOYED_OPTIONS } from './esbuild-options';
import { log, median, min, REPO_ROOT, round } from './util';

/**
 * Part 1 of the benchmark: the Lambda bundles exactly as `cdk synth` makes them, their size, and
 * the time a fresh Node process takes to import each one, against a bundle that only builds a
 * DynamoDB DocumentClient (built in the same run with the same esbuild options). Also the
 * bundling alternatives of docs/performance.md (CJS, no minify, source maps, SDK external) and
 * what each dependency adds on top of the SDK-only floor.
 */

const run = promisify(execFile);

/** What the cold-import child sees: the variables the functions require at cold start, nothing secret. */
export const IMPORT_ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  TABLE_NAME: 'task-board-bench',
  USER_POOL_ID: 'us-east-1_BenchPool',
  USER_POOL_CLIENT_ID: 'benchclientid0000000000000',
  TOKEN_ISSUER: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_BenchPool',
  AWS_REGION: 'us-east-1',
  // Live board events: the WebSocket stage's address (tickets hand it out) and its connections API.
  SOCKET_URL: 'wss://bench.execute-api.us-east-1.amazonaws.com/live',
  SOCKET_CALLBACK_URL: 'https://bench.execute-api.us-east-1.amazonaws.com/live',
  // Webhooks: the deliveries queue and the secrets' key, which their functions read at cold start.
  WEBHOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/bench-webhook-deliveries',
  WEBHOOK_KEY_ID: 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000',
  // The SDK warns once about Node 20 (Lambda runs 24); the warning is not part of what we measure.
  NODE_NO_WARNINGS: '1',
};

/** Runs in a fresh `node`: times `await import(bundle)` only (performance.now around it), then CPU time and memory. */
const PROBE = `
const { pathToFileURL } = await import('node:url');
const url = pathToFileURL(process.env.BENCH_IMPORT_FILE).href;
const file = process.env.BENCH_IMPORT_FILE;
// A CommonJS handler is loaded with require by the Lambda runtime, an ES module with import().
const { createRequire } = await import('node:module');
const load = file.endsWith('.cjs') ? () => createRequire(url)(file) : () => import(url);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await load();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const mem = process.memoryUsage();
process.stdout.write(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, rssMb: mem.rss / 1048576, heapMb: mem.heapUsed / 1048576 }));
`;

export interface Bundle {
  id: string;
  label: string;
  file: string;
  bytes: number;
  nodeArgs?: string[];
}

export interface ImportStats {
  runs: number;
  medianMs: number;
  minMs: number;
  medianCpuMs: number;
  rssMb: number;
  heapMb: number;
  samplesMs: number[];
}

interface ProbeResult {
  ms: number;
  cpuMs: number;
  rssMb: number;
  heapMb: number;
}

async function probe(bundle: Bundle): Promise<ProbeResult> {
  const { stdout } = await run(process.execPath, [...(bundle.nodeArgs ?? []), '--input-type=module', '-e', PROBE], {
    env: { ...IMPORT_ENV, BENCH_IMPORT_FILE: bundle.file },
    timeout: 60_000,
    maxBuffer: 1024 * 1024,
  });
  return JSON.parse(stdout) as ProbeResult;
}

/**
 * Cold import of every bundle, `runs` times each after one discarded warm-up round, interleaved
 * (every round imports every bundle once, in rotated order) so that a busy moment of the
 * machine hits all bundles alike instead of one.
 */
export async function measureImports(bundles: Bundle[], runs: number): Promise<Map<string, ImportStats>> {
  const samples = new Map<string, ProbeResult[]>(bundles.map((b) => [b.id, []]));
  for (let round = 0; round <= runs; round++) {
    const order = bundles.map((_, i) => bundles[(i + round) % bundles.length]!);
    for (const bundle of order) {
      const result = await probe(bundle);
      if (round > 0) samples.get(bundle.id)!.push(result);
    }
  }
  return new Map(
    [...samples].map(([id, list]) => [
      id,
      {
        runs: list.length,
        medianMs: round(median(list.map((r) => r.ms))),
        minMs: round(min(list.map((r) => r.ms))),
        medianCpuMs: round(median(list.map((r) => r.cpuMs))),
        rssMb: round(median(list.map((r) => r.rssMb)), 1),
        heapMb: round(median(list.map((r) => r.heapMb)), 1),
        samplesMs: list.map((r) => round(r.ms)),
      },
    ]),
  );
}

/**
 * A bundle's import time as a ratio to another's: the median, over the rounds, of the two
 * imports of the same round. Each round imports every bundle once, close together, so a busy
 * moment of the machine slows both sides of a pair; the ratio of two medians taken over
 * different moments moved by ±0.05 between runs, this by less.
 */
function pairedRatio(subject: ImportStats, reference: ImportStats): number {
  const ratios = subject.samplesMs.map((ms, i) => ms / reference.samplesMs[i]!);
  return round(median(ratios));
}

export interface SynthesizedFunction {
  routeId: RouteId;
  logicalId: string;
  asset: string;
  file: string;
  bytes: number;
  memorySize?: number;
  architectures?: string[];
}

/** `cdk synth` into a fresh directory and each route's function bundle, found by logical id prefix. */
export async function synthesize(outDir: string): Promise<{ functions: SynthesizedFunction[]; synthMs: number }> {
  const started = performance.now();
  try {
    await run('npx', ['cdk', 'synth', '--no-notices', '--quiet', '-o', outDir], {
      cwd: REPO_ROOT,
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      // 36 esbuild runs: 3 minutes on a quiet two-core machine, past 5 at a load average of 25.
      timeout: 1_200_000,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const { stderr = '', stdout = '' } = error as { stderr?: string; stdout?: string };
    throw new Error(`cdk synth failed\n${`${stdout}\n${stderr}`.trim().slice(-3000)}`);
  }
  const synthMs = performance.now() - started;
  // The root template and its nested stacks' (docs/infrastructure.md): the functions live in the latter.
  const templateFiles = readdirSync(outDir).filter((name) => name.endsWith('.template.json'));
  if (templateFiles.length === 0) throw new Error(`cdk synth wrote no template into ${outDir}`);
  type Resource = {
    Type: string;
    Metadata?: Record<string, unknown>;
    Properties?: { MemorySize?: number; Architectures?: string[] };
  };
  const lambdas = templateFiles.flatMap((file) => {
    const template = JSON.parse(readFileSync(join(outDir, file), 'utf8')) as { Resources: Record<string, Resource> };
    return Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
  });
  const functions = routeIds.map((routeId): SynthesizedFunction => {
    const prefix = `${functionIdOf(routeId)}Function`;
    const found = lambdas.filter(([logicalId]) => logicalId.startsWith(prefix));
    if (found.length !== 1) throw new Error(`expected one function with logical id ${prefix}*, found ${found.length}`);
    const [logicalId, resource] = found[0]!;
    const asset = String(resource.Metadata?.['aws:asset:path'] ?? '');
    const file = join(outDir, asset, 'index.mjs');
    return {
      routeId,
      logicalId,
      asset,
      file,
      bytes: statSync(file).size,
      memorySize: resource.Properties?.MemorySize,
      architectures: resource.Properties?.Architectures,
    };
  });
  return { functions, synthMs };
}

async function bundleTo(
  outFile: string,
  entry: { file: string } | { contents: string },
  options: BuildOptions = {},
): Promise<number> {
  await build({
    ...DEPLOYED_OPTIONS,
    ...options,
    ...('file' in entry
      ? { entryPoints: [join(REPO_ROOT, entry.file)] }
      : { stdin: { contents: entry.contents, resolveDir: REPO_ROOT, sourcefile: 'bench-entry.ts', loader: 'ts' } }),
    outfile: outFile,
  });
  return statSync(outFile).size;
}

/**
 * The route built as if personal access tokens did not exist: the module lib/http/authenticate.ts
 * runs for a `tbp_` token (and all it alone imports) replaced by an empty function. The pair
 * (deployed, this) is what a request with a session token pays at cold start for their existence.
 */
const WITHOUT_PERSONAL_TOKENS: Plugin = {
  name: 'without-personal-tokens',
  setup(plugins) {
    plugins.onResolve({ filter: /^\.\/personal-token$/ }, (args) =>
      args.importer.endsWith(join('lib', 'http', 'authenticate.ts')) ? { path: 'personal-token', namespace: 'stub' } : undefined,
    );
    plugins.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
      contents: 'export async function authenticatePersonalToken() { throw new Error("no personal tokens"); }',
      loader: 'js',
    }));
  },
};

const DOCUMENT_CLIENT_ONLY = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
export const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } });
`;

/** What each dependency adds to the SDK-only floor: the baseline plus one module of the service. */
const COMPONENTS: { id: string; label: string; contents: string }[] = [
  {
    id: 'sdk+schemas',
    label: '+ every request and response schema, built (lib/contract/schemas.ts, valibot)',
    // The schema builders are the module's functions that take no argument.
    contents:
      "import * as s from './lib/contract/schemas'; export const built = Object.values(s).filter((f) => typeof f === 'function' && f.length === 0).map((build) => build());",
  },
  {
    id: 'sdk+logger',
    label: '+ structured logger and EMF metrics (lib/runtime/logger.ts, metrics.ts)',
    contents: "export * from './lib/runtime/logger'; export * from './lib/http/metrics';",
  },
  { id: 'sdk+verifier', label: '+ JWT verifier (lib/auth/verifier.ts)', contents: "export * from './lib/auth/verifier';" },
  { id: 'sdk+middy', label: '+ @middy/core', contents: "import middy from '@middy/core'; export const chain = middy();" },
  { id: 'sdk+routes', label: '+ the route table (lib/routes.ts)', contents: "export * from './lib/routes';" },
];

/**
 * The SDK clients a function can bundle, each with a string that only that client's code holds
 * (its protocol's target prefix or its service name) and the floor's line that builds it. A
 * function's SDK floor is the bundle of exactly the clients found in its own bundle, built in the
 * same run, so that a function is held to its own code, not to the clients its work needs.
 */
const SDK_CLIENTS = {
  dynamodb: { marker: 'DynamoDB_20120810', source: DOCUMENT_CLIENT_ONLY },
  cognito: {
    marker: 'AWSCognitoIdentityProviderService',
    source: `import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
export const cognito = new CognitoIdentityProviderClient({});`,
  },
  connections: {
    marker: 'ApiGatewayManagementApi',
    source: `import { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
export const management = new ApiGatewayManagementApiClient({ endpoint: 'https://bench.execute-api.us-east-1.amazonaws.com/live' });`,
  },
  sqs: {
    marker: 'AmazonSQS',
    source: `import { SQSClient } from '@aws-sdk/client-sqs';
export const sqs = new SQSClient({});`,
  },
  kms: {
    marker: 'TrentService',
    source: `import { KMSClient } from '@aws-sdk/client-kms';
export const kms = new KMSClient({});`,
  },
} as const;
export type SdkClient = keyof typeof SDK_CLIENTS;

/** The SDK clients whose markers a bundle's text holds (none: an empty list). */
export const clientsInText = (text: string): SdkClient[] =>
  (Object.keys(SDK_CLIENTS) as SdkClient[]).filter((client) => text.includes(SDK_CLIENTS[client].marker));

/** The SDK clients in a bundle, by their markers; a bundle with none is held to the DocumentClient floor. */
export function clientsIn(file: string): SdkClient[] {
  const found = clientsInText(readFileSync(file, 'utf8'));
  return found.length > 0 ? found : ['dynamodb'];
}

/**
 * How a floor's SDK is built. `sdk`: as anyone bundles the SDK, its default credential chain
 * included: the reference the issue measures against. `env`: with the deployed aliases
 * (infra/bundling.ts: credentials from the environment only), so that the ratio to it is what
 * the service's own code adds to the same SDK.
 */
type FloorBuild = 'sdk' | 'env';
const floorId = (clients: SdkClient[], build: FloorBuild) => `floor:${clients.join('+')}:${build}`;

/** The functions no HTTP route invokes: the WebSocket routes, the stream and queue consumers, the sweeper and the pool's triggers. */
const EVENT_FUNCTIONS: { id: string; entry: string }[] = [
  socketRoutes,
  streamConsumers,
  queueConsumers,
  schedules,
  poolTriggers,
].flatMap((table) => Object.entries(table).map(([id, row]) => ({ id, entry: (row as { entry: string }).entry })));

export interface BundleReport {
  synthMs: number;
  importRuns: number;
  baseline: { bytes: number; import: ImportStats };
  /** Every SDK floor of the run, by id (`floor:<clients>:<sdk|env>`). */
  floors: Record<string, { clients: SdkClient[]; build: FloorBuild; bytes: number; import: ImportStats }>;
  /**
   * ratio: to the DocumentClient-only baseline; floorRatio: to the plain SDK floor of the clients
   * found in the bundle (the target); ownRatio: to that floor built with the deployed aliases.
   */
  routes: (SynthesizedFunction & {
    import: ImportStats;
    ratio: number;
    cpuRatio: number;
    clients: SdkClient[];
    floorRatio: number;
    ownRatio: number;
  })[];
  /** The same route (cards.get) bundled differently: ESM vs CJS, minify, source maps, SDK external. */
  variants: {
    id: string;
    label: string;
    bytes: number;
    import: ImportStats;
    ratio: number;
    cpuRatio: number;
    /** The deployed build's import time over this one's, paired by round (undefined in older results). */
    deployedRatio?: number;
  }[];
  components: {
    id: string;
    label: string;
    bytes: number;
    import: ImportStats;
    addedMs: number;
    addedCpuMs: number;
    addedBytes: number;
  }[];
  replicaCheck: { route: string; deployedBytes: number; replicaBytes: number };
  /**
   * Live board events' functions, bundled here with the deployed options (the synthesized stack
   * of this commit has no function for them), held to no target; ratio to the DocumentClient-only
   * baseline and, for the two that send to sockets, to the DocumentClient + connections API floor.
   */
  events?: {
    functions: {
      id: string;
      entry: string;
      bytes: number;
      import: ImportStats;
      clients: SdkClient[];
      ratio: number;
      floorRatio: number;
      ownRatio: number;
    }[];
  };
}

export const VARIANT_ROUTE: RouteId = 'cards.get';

export async function benchBundles(runs: number): Promise<BundleReport> {
  const work = mkdtempSync(join(tmpdir(), 'task-board-bench-bundles-'));
  try {
    return await bundlesIn(work, runs);
  } finally {
    if (process.env.BENCH_KEEP !== '1') rmSync(work, { recursive: true, force: true });
  }
}

async function bundlesIn(work: string, runs: number): Promise<BundleReport> {
  const synthDir = join(work, 'cdk.out');
  log(`cdk synth into ${synthDir}`);
  const { functions, synthMs } = await synthesize(synthDir);
  log(`synth took ${(synthMs / 1000).toFixed(1)} s; ${functions.length} function bundles`);

  const out = (name: string) => {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  // The plain SDK-only bundle: the default credential chain, as anyone would build it.
  const baselineFile = join(out('baseline'), 'index.mjs');
  const baselineBytes = await bundleTo(baselineFile, { contents: DOCUMENT_CLIENT_ONLY }, { alias: {} });

  const entry = { file: routes[VARIANT_ROUTE].entry };
  const variantDefs: {
    id: string;
    label: string;
    file: string;
    options?: BuildOptions;
    nodeArgs?: string[];
  }[] = [
    { id: 'esm-min', label: 'as deployed: ESM, minified, SDK bundled, no source map', file: 'index.mjs' },
    {
      id: 'cjs-min',
      label: 'CommonJS instead of ESM, loaded with require (as the Lambda runtime loads a CommonJS handler)',
      file: 'index.cjs',
      options: { format: 'cjs', banner: {} },
    },
    {
      id: 'cjs-import',
      label: 'CommonJS loaded with import() (Node first scans it for named exports)',
      file: 'index.js',
      options: { format: 'cjs', banner: {} },
    },
    {
      id: 'esm-default-credentials',
      label: "the SDK's default credential chain instead of the environment's credentials (no alias)",
      file: 'index.mjs',
      options: { alias: {} },
    },
    { id: 'esm-nomin', label: 'not minified', file: 'index.mjs', options: { minify: false } },
    {
      id: 'esm-sourcemap',
      label: 'source map (external .map) + --enable-source-maps',
      file: 'index.mjs',
      options: { sourcemap: true },
      nodeArgs: ['--enable-source-maps'],
    },
    {
      id: 'esm-sdk-external',
      label: "SDK external ('@aws-sdk/*' from node_modules, as NodejsFunction's default)",
      file: 'index.mjs',
      options: { external: ['@aws-sdk/*'] },
    },
    {
      id: 'esm-no-personal-tokens',
      label: 'as deployed, without the personal-token path (what a session-token request would load if they did not exist)',
      file: 'index.mjs',
      options: { plugins: [WITHOUT_PERSONAL_TOKENS] },
    },
  ];
  const variantBundles: Bundle[] = [];
  for (const def of variantDefs) {
    const dir = out(`variant-${def.id}`);
    if (def.id === 'esm-sdk-external') symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const file = join(dir, def.file);
    const bytes = await bundleTo(file, entry, def.options);
    variantBundles.push({ id: `variant:${def.id}`, label: def.label, file, bytes, nodeArgs: def.nodeArgs });
  }
  const componentBundles: Bundle[] = [];
  for (const component of COMPONENTS) {
    const file = join(out(component.id), 'index.mjs');
    // Built as the baseline is (default credential chain), so that the difference is the component's.
    const bytes = await bundleTo(file, { contents: `${DOCUMENT_CLIENT_ONLY}\n${component.contents}` }, { alias: {} });
    componentBundles.push({ id: `component:${component.id}`, label: component.label, file, bytes });
  }

  const baseline: Bundle = { id: 'baseline', label: 'DynamoDB DocumentClient only', file: baselineFile, bytes: baselineBytes };
  const routeBundles: Bundle[] = functions.map((f) => ({
    id: `route:${f.routeId}`,
    label: f.routeId,
    file: f.file,
    bytes: f.bytes,
  }));
  const eventBundles: Bundle[] = [];
  for (const fn of EVENT_FUNCTIONS) {
    const file = join(out(`event-${fn.id}`), 'index.mjs');
    eventBundles.push({ id: `event:${fn.id}`, label: fn.id, file, bytes: await bundleTo(file, { file: fn.entry }) });
  }
  // One floor per set of clients some function bundles, built both ways.
  const clientsOf = new Map([...routeBundles, ...eventBundles].map((b) => [b.id, clientsIn(b.file)]));
  const floorSets = new Map([...clientsOf.values()].map((clients) => [clients.join('+'), clients]));
  const floorBundles: (Bundle & { clients: SdkClient[]; build: FloorBuild })[] = [];
  for (const clients of floorSets.values()) {
    for (const build of ['sdk', 'env'] as const) {
      const id = floorId(clients, build);
      const file = join(out(id.replaceAll(/[:+]/g, '-')), 'index.mjs');
      const contents = clients.map((client) => SDK_CLIENTS[client].source).join('\n');
      const bytes = await bundleTo(file, { contents }, build === 'sdk' ? { alias: {} } : {});
      floorBundles.push({ id, label: `${clients.join(' + ')} (${build})`, file, bytes, clients, build });
    }
  }
  const all = [baseline, ...floorBundles, ...routeBundles, ...variantBundles, ...componentBundles, ...eventBundles];
  log(`cold import: ${all.length} bundles x ${runs} runs (+1 warm-up round), each in a fresh node`);
  const stats = await measureImports(all, runs);
  const base = stats.get('baseline')!;
  const deployedVariant = variantBundles.find((b) => b.id === 'variant:esm-min')!;
  const deployedRoute = functions.find((f) => f.routeId === VARIANT_ROUTE)!;
  const againstFloors = (id: string, s: ImportStats) => {
    const clients = clientsOf.get(id)!;
    return {
      clients,
      floorRatio: pairedRatio(s, stats.get(floorId(clients, 'sdk'))!),
      ownRatio: pairedRatio(s, stats.get(floorId(clients, 'env'))!),
    };
  };

  return {
    synthMs: round(synthMs, 0),
    importRuns: runs,
    baseline: { bytes: baselineBytes, import: base },
    floors: Object.fromEntries(
      floorBundles.map((b) => [b.id, { clients: b.clients, build: b.build, bytes: b.bytes, import: stats.get(b.id)! }]),
    ),
    routes: functions.map((f) => {
      const s = stats.get(`route:${f.routeId}`)!;
      return {
        ...f,
        import: s,
        ratio: pairedRatio(s, base),
        cpuRatio: round(s.medianCpuMs / base.medianCpuMs),
        ...againstFloors(`route:${f.routeId}`, s),
      };
    }),
    variants: variantBundles.map((b) => {
      const s = stats.get(b.id)!;
      return {
        id: b.id.replace('variant:', ''),
        label: b.label,
        bytes: b.bytes,
        import: s,
        ratio: pairedRatio(s, base),
        cpuRatio: round(s.medianCpuMs / base.medianCpuMs),
        // Against the deployed build of the same route, imported in the same rounds.
        deployedRatio: pairedRatio(stats.get(deployedVariant.id)!, s),
      };
    }),
    components: componentBundles.map((b) => {
      const s = stats.get(b.id)!;
      return {
        id: b.id.replace('component:', ''),
        label: b.label,
        bytes: b.bytes,
        import: s,
        addedMs: round(s.medianMs - base.medianMs),
        addedCpuMs: round(s.medianCpuMs - base.medianCpuMs),
        addedBytes: b.bytes - baselineBytes,
      };
    }),
    replicaCheck: { route: VARIANT_ROUTE, deployedBytes: deployedRoute.bytes, replicaBytes: deployedVariant.bytes },
    events: {
      functions: EVENT_FUNCTIONS.map((fn, i) => {
        const s = stats.get(`event:${fn.id}`)!;
        return {
          id: fn.id,
          entry: fn.entry,
          bytes: eventBundles[i]!.bytes,
          import: s,
          ratio: pairedRatio(s, base),
          ...againstFloors(`event:${fn.id}`, s),
        };
      }),
    },
  };
}
