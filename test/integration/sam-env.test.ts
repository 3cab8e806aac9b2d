import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { DEPLOYED_OPTIONS } from '../../bench/esbuild-options';
import { functionIdOf } from '../../infra/api-function';
import { type RouteId, type RouteRow, routes, socketRoutes } from '../../lib/routes';
import { eventFileOf, PLACEHOLDER } from '../../scripts/make-events';
import { newUser } from '../support/api';
import { REPO_ROOT, runCommand, runNode } from '../support/run-node';
import { filledSampleEvent } from '../support/sample-events';
import { getTicket } from '../support/sockets';

/**
 * What `sam local invoke -e events/<row>.json` runs, short of Docker (which these machines lack):
 * the template synthesized as `cdk synth` makes it (in a child, without bundling), the env-vars
 * file `npm run sam:env -- local` writes from it for the running local stack of global setup, and
 * each function's bundle built with CDK's esbuild options (bench/esbuild-options.ts). Each bundle
 * then runs in a fresh Node process, as in a fresh container, with exactly the environment SAM
 * would give it: the template's literal variables, the file's entry for its logical id over them,
 * and the function's name. Its sample event from events/ carries real ids and a real token from
 * the local Cognito. The host is 127.0.0.1, as with `sam … --docker-network host` on Linux.
 *
 * Every HTTP route answers its success status, public and token routes alike: the verifier takes
 * the emulator's keys from TOKEN_JWKS (aws-jwt-verify would not fetch its http JWKS, which made
 * every token route 401 under SAM before).
 */

const work = mkdtempSync(join(tmpdir(), 'task-board-sam-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const outdir = join(work, 'cdk.out');
const bundles = join(work, 'bundles');
const envFile = join(work, 'sam-env.local.json');

type Resource = {
  Type?: string;
  Properties?: { Environment?: { Variables?: Record<string, unknown> }; Architectures?: string[] };
};
/** Every service function of the synthesized templates (root and nested), by logical id. */
const functions = new Map<string, Resource>();
let envVars: Record<string, Record<string, string>>;
let samTemplate: { Resources: Record<string, Resource> };

/** The logical id CDK gives a row's function: `BoardsList` + `Function` + an 8-digit hash. */
function logicalIdOf(rowId: string): string {
  const pattern = new RegExp(`^${functionIdOf(rowId)}Function[0-9A-F]{8}$`);
  const found = [...functions.keys()].filter((id) => pattern.test(id));
  if (found.length !== 1) throw new Error(`${rowId}: ${found.length} functions match ${pattern}`);
  return found[0]!;
}

/** The environment SAM gives a function: the template's literal values, then the file's entry over them. */
function samEnvironmentOf(logicalId: string): Record<string, string> {
  const declared = functions.get(logicalId)!.Properties!.Environment!.Variables!;
  const literal = Object.fromEntries(
    Object.entries(declared).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== ''),
  );
  return { ...literal, ...envVars[logicalId], AWS_LAMBDA_FUNCTION_NAME: logicalId };
}

/** The templates, as cdk synth writes them, and the env-vars file sam:env writes from them. */
async function synthesizeAndWriteEnv(): Promise<void> {
  // The templates, as cdk synth writes them (with the asset metadata the CDK CLI asks for; bundling
  // skipped: buildBundles builds them).
  const synth = await runNode(
    [
      '-e',
      `import('./infra/build-app.ts').then(({ buildApp }) => buildApp({ outdir: process.argv[1], context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-asset-metadata': true } }).app.synth())`,
      outdir,
    ],
    // A hang guard: the synth takes about half a minute on a quiet machine, several times that on a busy one.
    { timeoutMs: 480_000 },
  );
  if (synth.code !== 0) throw new Error(`synth failed\n${synth.stderr}`);
  const written = await runNode([
    'scripts/sam-env.ts',
    'local',
    '--data-dir',
    process.env.TASK_BOARD_DATA_DIR!,
    '--host',
    '127.0.0.1',
    '--template',
    join(outdir, 'TaskBoard-dev.template.json'),
    '--out',
    envFile,
  ]);
  if (written.code !== 0) throw new Error(`sam:env failed\n${written.stderr}`);
  envVars = JSON.parse(readFileSync(envFile, 'utf8'));
  samTemplate = JSON.parse(readFileSync(join(outdir, 'TaskBoard-dev.sam-local.template.json'), 'utf8'));
  for (const [id, resource] of Object.entries(samTemplate.Resources)) {
    if (resource.Type === 'AWS::Lambda::Function' && resource.Properties?.Environment?.Variables?.TOKEN_ISSUER) {
      functions.set(id, resource);
    }
  }
}

/**
 * One bundle per function, as CDK's NodejsFunction builds it; node_modules beside them, where
 * CDK copies the files a function reads at run time (the docs page's).
 */
async function buildBundles(): Promise<void> {
  mkdirSync(bundles, { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(bundles, 'node_modules'));
  const rows = [...Object.entries(routes), ['socket.connect', socketRoutes['socket.connect']] as const];
  await build({
    ...DEPLOYED_OPTIONS,
    absWorkingDir: REPO_ROOT,
    entryPoints: rows.map(([id, row]) => ({ in: row.entry, out: `${functionIdOf(id)}/index` })),
    outdir: bundles,
    outExtension: { '.js': '.mjs' },
  });
}

beforeAll(async () => {
  // The bundles need neither the templates nor the env file: they build while the synth runs.
  // Both are waited for, so that neither is still writing into the work directory when a failure
  // of the other ends the file.
  const done = await Promise.allSettled([synthesizeAndWriteEnv(), buildBundles()]);
  for (const outcome of done) if (outcome.status === 'rejected') throw outcome.reason;
}, 600_000);

/** Runs a bundle in a fresh process with `env` only, on `event`; its answer. */
async function invokeBundle(
  rowId: string,
  event: unknown,
): Promise<{ statusCode?: number; headers?: Record<string, string>; body?: string }> {
  const logicalId = logicalIdOf(rowId);
  const eventPath = join(work, `${rowId}-${randomUUID()}.json`);
  writeFileSync(eventPath, JSON.stringify(event));
  const probe = `
const { readFileSync } = await import('node:fs');
const [bundle, eventPath] = process.argv.slice(1);
const { handler } = await import(bundle);
const deadline = Date.now() + 29_000;
const context = { awsRequestId: 'sam-bundle', functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, getRemainingTimeInMillis: () => deadline - Date.now() };
const reply = await handler(JSON.parse(readFileSync(eventPath, 'utf8')), context);
process.stdout.write('\\nRESULT ' + JSON.stringify(reply) + '\\n');
`;
  const bundle = join(bundles, functionIdOf(rowId), 'index.mjs');
  const run = await runCommand(process.execPath, ['--input-type=module', '-e', probe, bundle, eventPath], {
    env: samEnvironmentOf(logicalId),
    timeoutMs: 90_000,
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (run.code !== 0 || !line) throw new Error(`${rowId}'s bundle failed (${run.code})\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(line.slice('RESULT '.length));
}

describe('npm run sam:env -- local, with the running local stack and the synthesized template', () => {
  it('gives every service function the local stack’s values, the emulator’s keys and this machine’s architecture', () => {
    const stack = JSON.parse(readFileSync(join(process.env.TASK_BOARD_DATA_DIR!, 'local-env.json'), 'utf8'));
    expect(functions.size).toBeGreaterThan(40);
    expect(Object.keys(envVars).sort()).toEqual(['Parameters', ...functions.keys()].sort());
    const here = process.arch === 'x64' ? 'x86_64' : 'arm64';
    for (const [id, resource] of functions) {
      expect(envVars[id]).toMatchObject({
        TOKEN_ISSUER: stack.TOKEN_ISSUER,
        TOKEN_JWKS: stack.TOKEN_JWKS,
        USER_POOL_ID: stack.USER_POOL_ID,
        AWS_ENDPOINT_URL_DYNAMODB: stack.AWS_ENDPOINT_URL_DYNAMODB,
        AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: stack.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
      });
      expect(resource.Properties!.Architectures).toEqual([here]);
    }
  });

  it('--help prints the usage and exits 0', async () => {
    const run = await runNode(['scripts/sam-env.ts', '--help']);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^usage: npm run sam:env -- local\|<stack-name> \[options\]/);
  });
});

describe('each bundled HTTP function, with the environment sam:env wrote, on its sample event', () => {
  const rows = Object.entries(routes) as [RouteId, RouteRow][];

  it.each(rows)('events/%s: its success status', async (routeId, row) => {
    const { text, board } = await filledSampleEvent(routeId);
    const reply = await invokeBundle(routeId, JSON.parse(text));
    const json = /json/.test(String(reply.headers?.['content-type']));
    const body = reply.body && json ? JSON.parse(reply.body) : undefined;
    expect({ route: routeId, status: reply.statusCode, ...(reply.statusCode === row.success.status ? {} : { body }) }).toEqual({
      route: routeId,
      status: row.success.status,
    });
    // A token route read the local table as the token's user.
    if (routeId === 'boards.list') expect(body).toEqual([board]);
  });
});

describe('the bundled $connect function, with the environment sam:env wrote', () => {
  it('opens a connection with a real ticket (its token verified with the handed-over keys)', async () => {
    const user = await newUser();
    const { ticket } = await getTicket(user);
    const connection = `sam-${randomUUID()}`;
    const text = readFileSync(join(REPO_ROOT, 'events', eventFileOf('socket.connect')), 'utf8')
      .replaceAll(PLACEHOLDER.ticket, ticket)
      .replaceAll(PLACEHOLDER.connection, connection);
    expect(await invokeBundle('socket.connect', JSON.parse(text))).toEqual({ statusCode: 200 });
  });
});
