import type { Node } from 'constructs';
import { type BaseStage, checkContext, defaultRunbookUrl, type StageSettings, stageOf, validateStageSettings } from './settings';
import { STAGE_FILES } from './stages';

/**
 * A stage's deployment, resolved once at synth: the stage from `-c stage=` (cdk.json: dev), every
 * setting from its committed file, infra/stages/<file>.ts, validated (infra/settings.ts). No other
 * context key is read, and one given fails synth, so that a deploy from any laptop or pipeline
 * makes the same stack from the same commit (docs/operators.md, "Stages").
 */
export interface StackConfig {
  /** `dev`, `staging`, `prod`, or a named stage `dev-<name>`: the stack is `TaskBoard-<stage>`. */
  stage: string;
  /** The stage whose file the settings came from (`dev` for `dev-ana`). */
  base: BaseStage;
  /** Table deletion protection. */
  deletionProtection: boolean;
  /** Keep the table, the user pool and the log groups when the stack is deleted. */
  retainData: boolean;
  corsOrigins: string[];
  /** Retention of every log group, in days (one of CloudWatch Logs' periods). */
  logRetentionDays: number;
  /** Default route throttling of the API stage, and the stricter one of /auth/*. */
  throttle: { rateLimit: number; burstLimit: number };
  authThrottle: { rateLimit: number; burstLimit: number };
  /**
   * Fair-use limits applied in the functions (docs/rate-limits.md):
   * `requests` per user and `authRequests` per client address (credential routes, bad tokens), per
   * fixed window of `windowSeconds`. 600 and 30 per 60 s in every committed stage.
   */
  rateLimits: RateLimits;
  /** Default route throttling of the WebSocket stage: messages (and connects) per second, per route. */
  socketThrottle: { rateLimit: number; burstLimit: number };
  /**
   * Set the region's API Gateway CloudWatch Logs role (account settings), which WebSocket access
   * logs need; false where the account already has one that another stack or team manages.
   */
  accountLogRole: boolean;
  /** Optional: email subscribed to the alarm topic. */
  alarmEmail?: string;
  /** Optional custom domain. */
  domain?: { name: string; certificateArn: string };
  /** The pool's SES sender; unset: Cognito's own (dev and staging only). */
  mailSender?: { from: string; name?: string; sesRegion: string };
  /**
   * Where the runbook is read: every alarm description ends with `Runbook: <runbookUrl>#<anchor>`
   * and the dashboard links `<runbookUrl>#how-to-use-this-runbook`. An absolute https URL: the
   * stage file's, else docs/runbook.md on the main branch of package.json's `repository`.
   */
  runbookUrl: string;
}

export interface RateLimits {
  requests: number;
  authRequests: number;
  windowSeconds: number;
}

/** The contract's example quotas (docs/rate-limits.md), which the committed stages set. */
export const DEFAULT_RATE_LIMITS: RateLimits = { requests: 600, authRequests: 30, windowSeconds: 60 };

/**
 * The stage's configuration: `-c stage=` (checked: infra/settings.ts `stageOf`), no other context
 * key of this app's, and the stage file's settings, each key of `overrides` replacing the file's
 * (tests; nothing on the command line reaches it) before validation.
 */
export function readStackConfig(node: Node, overrides: Partial<StageSettings> = {}): StackConfig {
  const { stage, base } = stageOf(node.tryGetContext('stage') ?? 'dev');
  checkContext(node, base);
  const file = `infra/stages/${base}.ts`;
  const replaced = Object.keys(overrides);
  const settings = validateStageSettings(
    { ...STAGE_FILES[base], ...overrides },
    replaced.length === 0 ? file : `${file} (with ${replaced.join(', ')} replaced)`,
  );
  if (base === 'prod' && !settings.mailSender) {
    throw new Error(
      `${file}: "mailSender" is null: prod must send its codes through Amazon SES (Cognito's own sender allows a few dozen messages a day, which anyone can use up)`,
    );
  }
  const { alarmEmail, domain, runbookUrl, mailSender, ...rest } = settings;
  return {
    stage,
    base,
    ...rest,
    alarmEmail: alarmEmail ?? undefined,
    domain: domain ?? undefined,
    mailSender: mailSender ?? undefined,
    runbookUrl: runbookUrl ?? defaultRunbookUrl(),
  };
}

/** The rate limits of the node's stage: its file's `rateLimits` (no context key sets them). */
export function readRateLimits(node: Node): RateLimits {
  return readStackConfig(node).rateLimits;
}
