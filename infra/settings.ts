import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import * as v from 'valibot';

/**
 * A stage's deployment settings, committed one file a stage (infra/stages/<stage>.ts) and
 * validated here at synth, so that a deploy from any laptop or pipeline makes the same stack: no
 * setting comes from the command line (`-c stage=…` only picks the file), none has a hidden
 * default but `runbookUrl` (from package.json's `repository`), and a key that is unknown,
 * missing or wrong fails synth naming the file and the key. docs/operators.md, "Stages".
 */

const positive = v.pipe(v.number('a number'), v.finite(), v.gtValue(0, 'a positive number'));
const wholePositive = v.pipe(v.number('a whole number'), v.integer('a whole number'), v.minValue(1, 'at least 1'));
const throttle = v.strictObject({
  /** Steady requests (or WebSocket messages) per second. */
  rateLimit: positive,
  /** The bucket above it: requests allowed at once. */
  burstLimit: wholePositive,
});
const origin = v.pipe(
  v.string(),
  v.check((value) => value === '*' || /^https?:\/\/[^/\s]+$/.test(value), 'an origin (scheme://host[:port], no path) or "*"'),
);
/** CloudWatch Logs' retention periods, in days (RetentionDays). */
const RETENTION_PERIODS = Object.values(RetentionDays).filter((value): value is number => typeof value === 'number');

export const stageSettingsSchema = v.strictObject({
  /** DynamoDB deletion protection on the table. */
  deletionProtection: v.boolean(),
  /** Keep the table, the user pool and the log groups when the stack is deleted. */
  retainData: v.boolean(),
  /** Allowed CORS origins (no cookies are used, so `"*"` is safe). */
  corsOrigins: v.pipe(v.array(origin), v.minLength(1, 'at least one origin')),
  /** Retention of every log group (functions, HTTP and WebSocket access logs), in days. */
  logRetentionDays: v.picklist(RETENTION_PERIODS, `one of CloudWatch Logs' periods (${RETENTION_PERIODS.join(', ')})`),
  /** Default route throttling of the HTTP API stage. */
  throttle,
  /** The stricter throttling of the routes that call Cognito (`/auth/*`). */
  authThrottle: throttle,
  /** Default route throttling of the WebSocket stage (connects and messages per route). */
  socketThrottle: throttle,
  /** Fair-use quotas in the functions (docs/rate-limits.md). */
  rateLimits: v.strictObject({
    /** Requests per user per window. */
    requests: wholePositive,
    /** Requests per client address per window (credential routes, requests with a bad token). */
    authRequests: wholePositive,
    windowSeconds: wholePositive,
  }),
  /** Set the region's API Gateway CloudWatch Logs role; false where the account has one managed elsewhere. */
  accountLogRole: v.boolean(),
  /**
   * Who the user pool's mail (address verification and password reset codes) comes from: an
   * address (or one on a domain) verified in Amazon SES in `sesRegion`, with the SES account out
   * of the sandbox. null: Cognito's own sender, which anyone can exhaust (a few dozen messages a
   * day per account) with reset requests: allowed on dev and staging with a synth warning, refused
   * on prod. docs/accounts.md, "Mail".
   */
  mailSender: v.nullable(
    v.strictObject({
      from: v.pipe(v.string(), v.email('an email address')),
      name: v.exactOptional(v.pipe(v.string(), v.minLength(1, 'a name'), v.maxLength(64, 'at most 64 characters'))),
      sesRegion: v.pipe(v.string(), v.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as eu-west-1')),
    }),
  ),
  /** Email subscribed to the alarm topic, or null for none (subscribe to the AlarmTopicArn output yourself). */
  alarmEmail: v.nullable(v.pipe(v.string(), v.email('an email address'))),
  /** Custom domain of the API, with an ACM certificate in the stack's region; null for none. */
  domain: v.nullable(
    v.strictObject({
      name: v.pipe(
        v.string(),
        v.regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'a lower-case domain name'),
      ),
      certificateArn: v.pipe(
        v.string(),
        v.regex(/^arn:aws[\w-]*:acm:[\w-]+:\d{12}:certificate\/[\w-]+$/, 'an ACM certificate ARN'),
      ),
    }),
  ),
  /**
   * Where alarm descriptions and the dashboard link the runbook: an https URL of docs/runbook.md
   * as its host renders it (each alarm adds `#<section>`). By default the file on the main branch
   * of package.json's `repository`.
   */
  runbookUrl: v.exactOptional(
    v.pipe(
      v.string(),
      v.maxLength(400, 'at most 400 characters'),
      v.regex(/^https:\/\/[^/\s#?]+\/[^\s#?]*$/, 'an https URL without "#" or "?" (each alarm adds its section\'s anchor)'),
    ),
  ),
});

/** What a file in infra/stages/ holds (`export default { … } satisfies StageSettings`). */
export type StageSettings = v.InferInput<typeof stageSettingsSchema>;

/** The keys a stage file has, for messages. */
const SETTING_KEYS = Object.keys(stageSettingsSchema.entries);

/**
 * A stage's settings, validated: every problem of the file, each naming its key, in one error.
 * `source` names the file in the message.
 */
export function validateStageSettings(input: unknown, source: string): v.InferOutput<typeof stageSettingsSchema> {
  const result = v.safeParse(stageSettingsSchema, input);
  if (result.success) {
    const below = authBackstopProblems(result.output);
    if (below.length === 0) return result.output;
    throw new Error(`${source}: ${below.join('; ')}`);
  }
  const problems = result.issues.map((issue) => {
    const key = v.getDotPath(issue) ?? '(the file)';
    if (issue.type === 'strict_object' && issue.expected === 'never') {
      const known = key.includes('.') ? [] : SETTING_KEYS;
      const near = closest(key.split('.').at(-1)!, known);
      return `"${key}" is not a setting${near ? ` (did you mean "${near}"?)` : ''}`;
    }
    if (issue.received === 'undefined') return `"${key}" is missing`;
    return `"${key}" must be ${issue.expected && !/^[a-z]+$/.test(issue.expected) ? issue.message : describe(issue)}; got ${issue.received}`;
  });
  throw new Error(`${source}: ${problems.join('; ')}`);
}

/**
 * The stage's throttle of the credential routes (`authThrottle`, one bucket per route shared by
 * every client) is a backstop above the per-address limiter (`rateLimits.authRequests` per
 * `windowSeconds`), never in front of it: below it, one client past its own quota would have the
 * gateway refuse everyone's sign-ins before the limiter could tell that client apart
 * (docs/rate-limits.md, "The stage's throttle of the credential routes"). So its steady rate
 * admits at least AUTH_BACKSTOP_ADDRESSES addresses each spending its whole quota, and its burst
 * one address's two quotas sent together around a window boundary (fixed windows).
 */
const AUTH_BACKSTOP_ADDRESSES = 10;

function authBackstopProblems({ authThrottle, rateLimits }: v.InferOutput<typeof stageSettingsSchema>): string[] {
  const problems: string[] = [];
  const allowance = `${rateLimits.authRequests} per ${rateLimits.windowSeconds} s per address (rateLimits)`;
  const leastRate = (rateLimits.authRequests * AUTH_BACKSTOP_ADDRESSES) / rateLimits.windowSeconds;
  if (authThrottle.rateLimit < leastRate) {
    problems.push(
      `"authThrottle.rateLimit" must be at least ${leastRate} (${AUTH_BACKSTOP_ADDRESSES} addresses at ${allowance}), a backstop above the address limiter; got ${authThrottle.rateLimit}`,
    );
  }
  if (authThrottle.burstLimit < 2 * rateLimits.authRequests) {
    problems.push(
      `"authThrottle.burstLimit" must be at least ${2 * rateLimits.authRequests} (one address's two windows' quotas at ${allowance}, sent around a boundary); got ${authThrottle.burstLimit}`,
    );
  }
  return problems;
}

function describe(issue: v.BaseIssue<unknown>): string {
  // Our own messages ("a positive number") are the requirement; valibot's name the type.
  return issue.message.startsWith('Invalid ') ? (issue.expected ?? issue.message) : issue.message;
}

/** The nearest known key within two edits (case ignored), for a misspelt one. */
function closest(key: string, known: string[]): string | undefined {
  let best: [string, number] | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance <= 2 && (!best || distance < best[1])) best = [candidate, distance];
  }
  return best?.[0];
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The stages with a file of their own. */
export const BASE_STAGES = ['dev', 'staging', 'prod'] as const;
export type BaseStage = (typeof BASE_STAGES)[number];

/**
 * The longest stage name. A grouped function is named `TaskBoard-<stage>-<group>-<Function>`
 * (infra/task-board-stack.ts) within Lambda's 64 characters: 10 + 20 + 1 leaves 33 for the group
 * and the row's function id, whose longest is 27 today (`auth-AuthVerifyEmailRequest`).
 */
export const STAGE_NAME_MAX = 20;

/**
 * The stage a `-c stage=` names, and the file whose settings it takes: `dev`, `staging` and `prod`
 * their own; a named stage `dev-<name>` (`dev-ana`) dev's, as a stack of its own
 * (`TaskBoard-dev-ana`) whose every named resource carries the stage, so that engineers can each
 * have one in one account. The name is checked against CloudFormation's stack name rule (a
 * letter first, then letters, digits and hyphens, 128 at most) and this stack's own: lower-case
 * words joined by single hyphens, and at most STAGE_NAME_MAX characters.
 */
export function stageOf(value: unknown): { stage: string; base: BaseStage } {
  const allowed = `${BASE_STAGES.join(', ')} or dev-<name> (lower-case letters and digits, words joined by single hyphens, ${STAGE_NAME_MAX} characters at most)`;
  if (typeof value !== 'string') throw new Error(`context "stage" must be ${allowed}; got ${JSON.stringify(value)}`);
  const stackName = `TaskBoard-${value}`;
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(stackName) || stackName.length > 128) {
    throw new Error(
      `context "stage": "${value}" makes the stack name "${stackName}", which CloudFormation refuses (letters, digits and hyphens only, 128 at most); use ${allowed}`,
    );
  }
  if ((BASE_STAGES as readonly string[]).includes(value)) return { stage: value, base: value as BaseStage };
  if (!/^dev-[a-z0-9]+(-[a-z0-9]+)*$/.test(value)) {
    const why = /^(staging|prod)-/.test(value) ? ' (only dev takes named copies: staging and prod are one stack each)' : '';
    throw new Error(`context "stage" must be ${allowed}; got "${value}"${why}`);
  }
  if (value.length > STAGE_NAME_MAX) {
    throw new Error(
      `context "stage": "${value}" is ${value.length} characters, over ${STAGE_NAME_MAX}: function names (TaskBoard-<stage>-<group>-<Function>) must stay within Lambda's 64`,
    );
  }
  return { stage: value, base: 'dev' };
}

/**
 * Context keys that are CDK's own rather than this app's: feature flags (`@aws-cdk/…`), the CLI's
 * (`aws:cdk:…`), lookups cached in cdk.context.json (`<kind>:<args>`), and these words.
 */
const CDK_CONTEXT_WORDS = new Set(['cli-telemetry', 'acknowledged-issue-numbers']);

/** The context keys this app used to read: a deploy command from older docs gets told where they went. */
const FORMER_OPTIONS: Record<string, string> = {
  corsOrigins: 'corsOrigins',
  alarmEmail: 'alarmEmail',
  domainName: 'domain.name',
  certificateArn: 'domain.certificateArn',
  deletionProtection: 'deletionProtection',
  retainData: 'retainData',
  throttleRate: 'throttle.rateLimit',
  throttleBurst: 'throttle.burstLimit',
  authThrottleRate: 'authThrottle.rateLimit',
  authThrottleBurst: 'authThrottle.burstLimit',
  socketThrottleRate: 'socketThrottle.rateLimit',
  socketThrottleBurst: 'socketThrottle.burstLimit',
  accountLogRole: 'accountLogRole',
  runbookUrl: 'runbookUrl',
  rateLimitRequests: 'rateLimits.requests',
  authRateLimitRequests: 'rateLimits.authRequests',
  rateLimitWindowSeconds: 'rateLimits.windowSeconds',
};

/**
 * Fails synth on any context key (`-c key=…`, cdk.json, cdk.context.json, ~/.cdk.json) that is
 * not `stage` nor CDK's own: a setting given there would make this deploy differ from the next
 * one made without it, and a misspelt one would be ignored.
 */
export function checkContext(node: Node, stage: BaseStage): void {
  const context = node.getAllContext() as Record<string, unknown>;
  const stray = Object.keys(context).filter(
    (key) => key !== 'stage' && !key.startsWith('@') && !key.includes(':') && !CDK_CONTEXT_WORDS.has(key),
  );
  if (stray.length === 0) return;
  const file = `infra/stages/${stage}.ts`;
  const problems = stray.map((key) =>
    FORMER_OPTIONS[key]
      ? `context "${key}" is no longer read: set "${FORMER_OPTIONS[key]}" in ${file}`
      : `context "${key}" is not an option`,
  );
  throw new Error(
    `${problems.join('; ')}. Only -c stage=<stage> is read; every setting is in the stage's committed file (docs/operators.md, "Stages").`,
  );
}

/**
 * The web address of the repository package.json names (`repository`: a URL, `{ url }`, or
 * npm's `github:owner/repo` / `owner/repo` shorthands), e.g. `https://github.com/owner/task-board`.
 */
export function repositoryWebUrl(repository: unknown): string {
  const raw = typeof repository === 'object' && repository !== null ? (repository as { url?: unknown }).url : repository;
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new Error('package.json has no "repository": it gives the default runbookUrl of every stage');
  const value = raw.trim();
  const shorthand = value.match(/^(?:github:)?([\w.-]+)\/([\w.-]+?)(?:\.git)?$/);
  if (shorthand) return `https://github.com/${shorthand[1]}/${shorthand[2]}`;
  const ssh = value.match(/^(?:git\+)?(?:ssh:\/\/)?git@([^:/\s]+)[:/]([^\s]+?)(?:\.git)?\/?$/);
  if (ssh) return `https://${ssh[1]}/${ssh[2]}`;
  const web = value.match(/^(?:git\+)?(?:https?|git):\/\/(?:[^@/\s]+@)?([^/\s]+)\/([^\s?#]+?)(?:\.git)?\/?$/);
  if (web) return `https://${web[1]}/${web[2]}`;
  throw new Error(`package.json "repository" is not a repository address: ${JSON.stringify(raw)}`);
}

/** The branch whose runbook the default links show: the one the pipeline deploys. */
const RUNBOOK_BRANCH = 'main';

/**
 * The runbook in the repository, as its host shows a file: `<web>/blob/main/docs/runbook.md`, from
 * the package.json of `root` (the working directory: cdk and jest run at the repository's root).
 */
export function defaultRunbookUrl(root = process.cwd()): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { repository?: unknown };
  return `${repositoryWebUrl(pkg.repository)}/blob/${RUNBOOK_BRANCH}/docs/runbook.md`;
}
