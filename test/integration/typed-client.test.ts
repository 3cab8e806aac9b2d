import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseUrl, call } from '../support/api';
import { REPO_ROOT, runCommand } from '../support/run-node';

/**
 * A change to the served document that breaks generated clients fails here. The test
 * generates a client from GET /openapi.json with a real generator, openapi-typescript (its Node
 * API, in test/typed-client/generator, which carries the TypeScript 5 JS API it needs), compiles
 * test/typed-client/scenario.ts against it strictly with the project's TypeScript, then runs that
 * scenario — the whole spec through openapi-fetch — against the local stack.
 *
 * The files are written to test/.generated/<run> (git-ignored, outside tsconfig and Biome), inside
 * the repository so that the scenario's `openapi-fetch` resolves to the project's node_modules.
 * They are removed when the test passes and kept, for a look, when it fails.
 */

/** A step of the consumer's build, in its own process group (tsc starts a native compiler). */
const run = async (command: string, args: string[], cwd: string, timeoutMs: number) => {
  const { code, stdout, stderr } = await runCommand(command, args, { cwd, timeoutMs, group: true });
  return { code, stdout, output: `${stdout}${stderr}` };
};

const node = process.execPath;
const generator = join(REPO_ROOT, 'test/typed-client/generator/generate.mjs');
const tsc = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
/** A consumer's strictest usual settings; `--skipLibCheck false` checks the generated .d.ts too. */
const STRICT = [
  '--ignoreConfig',
  '--noEmit',
  '--strict',
  '--noUncheckedIndexedAccess',
  '--exactOptionalPropertyTypes',
  '--module',
  'preserve',
  '--moduleResolution',
  'bundler',
  '--target',
  'es2022',
  '--types',
  'node',
  '--skipLibCheck',
  'false',
];

describe('a client generated from GET /openapi.json (openapi-typescript + openapi-fetch)', () => {
  const dir = join(REPO_ROOT, 'test/.generated', `typed-client-${randomUUID()}`);
  let passed = false;

  beforeAll(() => mkdirSync(dir, { recursive: true }));
  afterAll(() => {
    if (passed) rmSync(dir, { recursive: true, force: true });
  });

  it('compiles strictly and runs the whole spec against the stack', async () => {
    const served = await call('GET', '/openapi.json');
    expect(served.status).toBe(200);
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(served.body));

    const generated = await run(node, [generator, 'openapi.json', 'schema.d.ts'], dir, 30_000);
    if (generated.code !== 0) throw new Error(`openapi-typescript failed:\n${generated.output}`);
    copyFileSync(join(REPO_ROOT, 'test/typed-client/scenario.ts'), join(dir, 'scenario.ts'));

    const compiled = await run(node, [tsc, ...STRICT, 'scenario.ts', 'schema.d.ts'], dir, 45_000);
    if (compiled.code !== 0)
      throw new Error(`the scenario does not compile against the generated client (${dir}):\n${compiled.output}`);

    const ran = await run(node, ['--import', 'tsx', 'scenario.ts', baseUrl()], dir, 45_000);
    if (ran.code !== 0) throw new Error(`the scenario failed against the stack (${dir}):\n${ran.output}`);
    const summary = JSON.parse(ran.stdout.trim().split('\n').at(-1) ?? '');
    expect(summary).toEqual({
      scenario: 'ok',
      steps: [
        'register',
        'verify email',
        'login',
        'create board',
        'list boards',
        'rename board',
        'add columns',
        'create cards',
        'read and update cards',
        'move cards',
        'batch',
        'read, rename, move and delete a column',
        'members',
        'read tree',
        'conditional requests',
        'labels',
        'board events',
        'realtime ticket',
        'personal token',
        'errors',
        'delete card and board',
      ],
    });
    passed = true;
  });
});
