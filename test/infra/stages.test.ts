import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildApp, clearEarlierSynth } from '../../infra/build-app';
import { readStackConfig } from '../../infra/config';
import {
  BASE_STAGES,
  defaultRunbookUrl,
  repositoryWebUrl,
  STAGE_NAME_MAX,
  stageOf,
  validateStageSettings,
} from '../../infra/settings';
import { STAGE_FILES } from '../../infra/stages';
import { appProps, unbundledAppProps } from './app-props';
import { synthDeployment } from './deployment';

/**
 * Stages (docs/operators.md "Stages"): each one's settings come from its committed file
 * (infra/stages/<stage>.ts), validated at synth; `-c` names the stage and nothing else; a named
 * stage `dev-<name>` is a stack of its own on dev's settings.
 */
const configOf = (context: Record<string, unknown>) => readStackConfig(new App(appProps({ context })).node);
const { dev, staging, prod } = STAGE_FILES;

describe('the committed stage files', () => {
  it.each(BASE_STAGES)('%s: every setting present and valid', (stage) => {
    expect(() => validateStageSettings(STAGE_FILES[stage], `infra/stages/${stage}.ts`)).not.toThrow();
  });

  it('prod keeps and protects its data and logs a year; dev and staging go with their stack', () => {
    expect(prod).toMatchObject({ deletionProtection: true, retainData: true, logRetentionDays: 365 });
    for (const settings of [dev, staging])
      expect(settings).toMatchObject({ deletionProtection: false, retainData: false, logRetentionDays: 30 });
  });

  it('staging meets what prod will: the same throttles and quotas', () => {
    for (const key of ['throttle', 'authThrottle', 'socketThrottle', 'rateLimits', 'corsOrigins'] as const)
      expect(staging[key]).toEqual(prod[key]);
  });

  it.each(BASE_STAGES)('-c stage=%s builds TaskBoard-<stage> from its file', (stage) => {
    const config = configOf({ stage });
    expect(config).toMatchObject({ stage, base: stage, corsOrigins: STAGE_FILES[stage].corsOrigins });
    expect(config.throttle).toEqual(STAGE_FILES[stage].throttle);
    expect(config.alarmEmail).toBe(STAGE_FILES[stage].alarmEmail ?? undefined);
    expect(config.runbookUrl).toBe(STAGE_FILES[stage].runbookUrl ?? defaultRunbookUrl());
  });

  it('staging synthesizes, cdk-nag included, as TaskBoard-staging', () => {
    const built = synthDeployment({ stage: 'staging' });
    expect(built.stack.stackName).toBe('TaskBoard-staging');
    expect(built.root.template.Description).toBe('Task-board REST service (staging)');
  });

  it("is dev when no stage is given (cdk.json's default)", () => {
    expect(configOf({}).stage).toBe('dev');
  });
});

describe('a stage file that is wrong fails synth, naming the file and the key', () => {
  const check = (input: unknown) => () => validateStageSettings(input, 'infra/stages/prod.ts');

  it('an unknown key, with the one it was probably meant to be', () => {
    const { corsOrigins, ...rest } = prod;
    expect(check({ ...rest, corsOrigin: corsOrigins })).toThrow(
      /^infra\/stages\/prod\.ts: "corsOrigins" is missing; "corsOrigin" is not a setting \(did you mean "corsOrigins"\?\)$/,
    );
    expect(check({ ...prod, alarmemail: 'ops@example.com' })).toThrow(
      /"alarmemail" is not a setting \(did you mean "alarmEmail"\?\)/,
    );
    expect(check({ ...prod, throttle: { ...prod.throttle, burst: 5 } })).toThrow(/"throttle\.burst" is not a setting/);
  });

  it('a missing key, even one whose value may be null', () => {
    const { alarmEmail: _, ...withoutEmail } = prod;
    expect(check(withoutEmail)).toThrow(/^infra\/stages\/prod\.ts: "alarmEmail" is missing$/);
    const { rateLimits, ...withoutWindow } = prod;
    expect(check({ ...withoutWindow, rateLimits: { requests: rateLimits.requests, authRequests: 1 } })).toThrow(
      /"rateLimits\.windowSeconds" is missing/,
    );
  });

  it.each([
    ['deletionProtection', 'yes', /"deletionProtection" must be boolean; got "yes"/],
    ['corsOrigins', ['https://app.example.com/path'], /"corsOrigins\.0" must be an origin/],
    ['corsOrigins', [], /"corsOrigins" must be at least one origin/],
    ['logRetentionDays', 31, /"logRetentionDays" must be one of CloudWatch Logs' periods/],
    ['throttle', { rateLimit: 0, burstLimit: 10 }, /"throttle\.rateLimit" must be a positive number; got 0/],
    ['rateLimits', { requests: 1.5, authRequests: 30, windowSeconds: 60 }, /"rateLimits\.requests" must be a whole number/],
    ['alarmEmail', 'ops', /"alarmEmail" must be an email address/],
    [
      'domain',
      { name: 'api.example.com', certificateArn: 'arn:aws:iam::1:role/x' },
      /"domain\.certificateArn" must be an ACM certificate ARN/,
    ],
    ['runbookUrl', 'docs/runbook.md', /"runbookUrl" must be an https URL/],
  ])('%s = %j', (key, value, message) => {
    expect(check({ ...prod, [key]: value })).toThrow(message);
  });

  it('every problem at once', () => {
    expect(check({ ...prod, retainData: 'no', corsOrigin: ['*'] })).toThrow(
      /"retainData" must be .*; "corsOrigin" is not a setting/,
    );
  });

  it('an authThrottle below what the address limiter allows: the gateway would refuse every sign-in before the limiter', () => {
    expect(check({ ...prod, authThrottle: { rateLimit: 4.9, burstLimit: 60 } })).toThrow(
      /^infra\/stages\/prod\.ts: "authThrottle\.rateLimit" must be at least 5 \(10 addresses at 30 per 60 s per address \(rateLimits\)\), a backstop above the address limiter; got 4\.9$/,
    );
    expect(check({ ...prod, authThrottle: { rateLimit: 30, burstLimit: 59 } })).toThrow(
      /^infra\/stages\/prod\.ts: "authThrottle\.burstLimit" must be at least 60 \(one address's two windows' quotas at 30 per 60 s per address \(rateLimits\), sent around a boundary\); got 59$/,
    );
    // The floor follows the address quota: raising it without the backstop fails, naming both.
    expect(check({ ...prod, rateLimits: { ...prod.rateLimits, authRequests: 300 } })).toThrow(
      /"authThrottle\.rateLimit" must be at least 50 .*got 30; "authThrottle\.burstLimit" must be at least 600 .*got 60$/,
    );
    expect(check({ ...prod, authThrottle: { rateLimit: 5, burstLimit: 60 } })).not.toThrow();
  });
});

describe("the credential routes' stage throttle: a backstop above the address limiter, below Cognito", () => {
  // docs/rate-limits.md, "The stage's throttle of the credential routes".
  const perAddress = (settings: typeof prod | typeof dev) => settings.rateLimits.authRequests / settings.rateLimits.windowSeconds;

  it("prod admits sixty addresses each spending its whole quota, and one address's quotas of two windows at once", () => {
    expect(prod.authThrottle.rateLimit / perAddress(prod)).toBe(60);
    expect(prod.authThrottle.burstLimit).toBeGreaterThanOrEqual(2 * prod.rateLimits.authRequests);
  });

  it("prod's four password sign-in routes (login, registration, password change, account deletion), each at it, stay within Cognito's UserAuthentication default of 120 a second", () => {
    expect(4 * prod.authThrottle.rateLimit).toBeLessThanOrEqual(120);
  });

  it('dev admits ten addresses, and stays below its own default throttle', () => {
    expect(dev.authThrottle.rateLimit / perAddress(dev)).toBe(10);
    expect(dev.authThrottle.rateLimit).toBeLessThan(dev.throttle.rateLimit);
  });
});

describe('-c takes the stage only', () => {
  it.each([
    [
      'corsOrigins',
      'https://app.example.com',
      /context "corsOrigins" is no longer read: set "corsOrigins" in infra\/stages\/prod\.ts/,
    ],
    ['alarmEmail', 'ops@example.com', /context "alarmEmail" is no longer read: set "alarmEmail" in infra\/stages\/prod\.ts/],
    ['domainName', 'api.example.com', /set "domain\.name" in infra\/stages\/prod\.ts/],
    ['rateLimitRequests', '100', /set "rateLimits\.requests" in infra\/stages\/prod\.ts/],
    ['corsOrigin', 'https://app.example.com', /context "corsOrigin" is not an option/],
    ['alarm-email', 'ops@example.com', /context "alarm-email" is not an option/],
  ])('-c %s=… fails synth naming the key', (key, value, message) => {
    expect(() => configOf({ stage: 'prod', [key]: value })).toThrow(message);
    expect(() => configOf({ stage: 'prod', [key]: value })).toThrow(/Only -c stage=<stage> is read/);
  });

  it("leaves CDK's own keys alone: feature flags, the CLI's, cached lookups, cdk.json's", () => {
    expect(() =>
      configOf({
        stage: 'dev',
        '@aws-cdk/core:checkSecretUsage': true,
        'aws:cdk:bundling-stacks': [],
        'availability-zones:account=123456789012:region=eu-west-1': ['eu-west-1a'],
        'cli-telemetry': false,
        'acknowledged-issue-numbers': [32775],
      }),
    ).not.toThrow();
  });
});

describe('stage names', () => {
  it.each(['dev-ana', 'dev-ana2', 'dev-team-a', `dev-${'a'.repeat(STAGE_NAME_MAX - 4)}`])(
    '%s: a stage of its own on dev settings',
    (name) => {
      expect(stageOf(name)).toEqual({ stage: name, base: 'dev' });
    },
  );

  it.each([
    ['', /must be dev, staging, prod or dev-<name>/],
    ['dev_ana', /CloudFormation refuses/],
    ['dev ana', /CloudFormation refuses/],
    ['dév-ana', /CloudFormation refuses/],
    ['qa', /must be dev, staging, prod or dev-<name>/],
    ['Dev-Ana', /must be dev, staging, prod or dev-<name>/],
    ['dev-', /must be dev, staging, prod or dev-<name>/],
    ['dev--ana', /must be dev, staging, prod or dev-<name>/],
    ['prod-ana', /only dev takes named copies/],
    ['staging-2', /only dev takes named copies/],
    [`dev-${'a'.repeat(STAGE_NAME_MAX - 3)}`, /over 20: function names .* Lambda's 64/],
  ])('%j is refused', (name, message) => {
    expect(() => stageOf(name)).toThrow(message);
    expect(() => configOf({ stage: name })).toThrow(/context "stage"/);
  });

  it('refuses a stage that is not a string', () => {
    expect(() => stageOf(7)).toThrow(/context "stage" must be/);
  });
});

describe('named stages: two engineers, one account', () => {
  const ana = synthDeployment({ stage: 'dev-ana' });
  const bob = synthDeployment({ stage: 'dev-bob' });

  it('each is a stack of its own, on the dev settings', () => {
    expect(ana.stack.stackName).toBe('TaskBoard-dev-ana');
    expect(bob.stack.stackName).toBe('TaskBoard-dev-bob');
    const { stage: _a, ...anaSettings } = ana.config;
    const { stage: _d, ...devSettings } = configOf({ stage: 'dev' });
    expect(anaSettings).toEqual(devSettings);
  });

  /** The properties that name a resource uniquely in an account and region, by type. */
  const PHYSICAL_NAMES: Record<string, string> = {
    'AWS::Lambda::Function': 'FunctionName',
    'AWS::CloudWatch::Dashboard': 'DashboardName',
    'AWS::CloudWatch::Alarm': 'AlarmName',
    'AWS::DynamoDB::Table': 'TableName',
    'AWS::Cognito::UserPool': 'UserPoolName',
    'AWS::SQS::Queue': 'QueueName',
    'AWS::SNS::Topic': 'TopicName',
    'AWS::IAM::Role': 'RoleName',
    'AWS::Logs::LogGroup': 'LogGroupName',
    'AWS::Events::Rule': 'Name',
    'AWS::ApiGatewayV2::DomainName': 'DomainName',
  };
  /** Every name the stack gives itself (the rest CloudFormation makes, under the stack's name). */
  const namesOf = (flat: { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> }) =>
    Object.values(flat.Resources ?? {}).flatMap(({ Type, Properties = {} }) => {
      const value = Properties[PHYSICAL_NAMES[Type] ?? ''];
      return typeof value === 'string' ? [`${Type}=${value}`] : [];
    });

  it('every named resource carries its stage, so that none collides with the other stack', () => {
    const anaNames = namesOf(ana.flat as never);
    const bobNames = namesOf(bob.flat as never);
    expect(anaNames.length).toBeGreaterThan(20);
    expect(anaNames.filter((name) => bobNames.includes(name))).toEqual([]);
    const functions = Object.values(ana.flat.Resources!).filter((r) => r.Type === 'AWS::Lambda::Function');
    for (const fn of functions) {
      const name = (fn.Properties as { FunctionName?: string }).FunctionName;
      if (name !== undefined) {
        expect(name.startsWith('TaskBoard-dev-ana-')).toBe(true);
        expect(name.length).toBeLessThanOrEqual(64);
      }
    }
    expect(anaNames).toContain('AWS::CloudWatch::Dashboard=TaskBoard-dev-ana');
  });

  it("has dev's resources at dev's logical ids, but the few CDK names after the stack's path", () => {
    // An event source mapping (…DynamoDBEventSourceTaskBoarddevTable<hash>) and the schedule's
    // invoke permission (…AllowEventRuleTaskBoarddevLiveFunctions…<hash>).
    const idsOf = (built: typeof ana) =>
      Object.keys(built.flat.Resources!)
        .map((id) => id.replace(/TaskBoard(dev[a-z]*)(\w*?)[0-9A-F]{16}$/, 'TaskBoard<stage>$2'))
        .sort();
    expect(idsOf(ana)).toEqual(idsOf(synthDeployment({ stage: 'dev' })));
  });

  it(`the longest name allowed (${STAGE_NAME_MAX} characters) still gives function names within Lambda's 64`, () => {
    const longest = `dev-${'x'.repeat(STAGE_NAME_MAX - 4)}`;
    expect(() => buildApp(unbundledAppProps({ stage: longest }))).not.toThrow();
  });
});

describe('the runbook address', () => {
  it.each([
    [{ type: 'git', url: 'git+https://github.com/acme/task-board.git' }, 'https://github.com/acme/task-board'],
    ['https://github.com/acme/task-board', 'https://github.com/acme/task-board'],
    ['github:acme/task-board', 'https://github.com/acme/task-board'],
    ['acme/task-board', 'https://github.com/acme/task-board'],
    ['git@github.example.com:acme/task-board.git', 'https://github.example.com/acme/task-board'],
    ['git+ssh://git@github.com/acme/task-board.git', 'https://github.com/acme/task-board'],
  ])("package.json's repository %j is %s", (repository, web) => {
    expect(repositoryWebUrl(repository)).toBe(web);
  });

  it('fails synth where package.json names no repository', () => {
    expect(() => repositoryWebUrl(undefined)).toThrow(/package\.json has no "repository"/);
    expect(() => repositoryWebUrl({ type: 'git' })).toThrow(/package\.json has no "repository"/);
    expect(() => repositoryWebUrl('not a repository')).toThrow(/not a repository address/);
  });

  it("defaults to docs/runbook.md on the main branch of this repository's package.json", () => {
    expect(defaultRunbookUrl()).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/blob\/main\/docs\/runbook\.md$/);
  });
});

describe('cdk.out holds the stage asked for', () => {
  it("removes an earlier synth's templates, manifests and SAM copies, and keeps the asset cache", () => {
    const dir = mkdtempSync(join(tmpdir(), 'task-board-cdk-out-'));
    try {
      const stale = [
        'TaskBoard-dev.template.json',
        'TaskBoarddevBoardsFunctions5FC8EA0D.nested.template.json',
        'TaskBoard-dev.assets.json',
        'TaskBoard-dev.metadata.json',
        'TaskBoard-dev.sam-local.template.json',
        'sam-env.local.json',
      ];
      const kept = ['manifest.json', 'tree.json', 'cdk.out', 'asset.0123abcd', 'bundle-growth'];
      for (const name of stale) writeFileSync(join(dir, name), '{}');
      for (const name of ['manifest.json', 'tree.json', 'cdk.out']) writeFileSync(join(dir, name), '{}');
      mkdirSync(join(dir, 'asset.0123abcd'));
      mkdirSync(join(dir, 'bundle-growth'));
      expect(clearEarlierSynth(dir).sort()).toEqual([...stale].sort());
      expect(readdirSync(dir).sort()).toEqual(kept.sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('does nothing where there is no output directory yet', () => {
    expect(clearEarlierSynth(join(tmpdir(), 'task-board-no-such-dir'))).toEqual([]);
  });
});
