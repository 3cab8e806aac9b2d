import type { Node } from 'constructs';

/**
 * Deployment settings, read from CDK context (`-c key=value` or cdk.json) and validated once.
 * `stage` picks safe defaults; each can be overridden on its own.
 */
export type Stage = 'dev' | 'prod';

export interface StackConfig {
  stage: Stage;
  /** Table deletion protection (prod default true). */
  deletionProtection: boolean;
  /** Keep the table and the user pool when the stack is deleted (prod default true). */
  retainData: boolean;
  corsOrigins: string[];
  logRetentionDays: number;
  /** Default route throttling of the API stage, and the stricter one of /auth/*. */
  throttle: { rateLimit: number; burstLimit: number };
  authThrottle: { rateLimit: number; burstLimit: number };
  /**
   * Fair-use limits applied in the functions (api-contract.md "Rate limits", docs/rate-limits.md):
   * `requests` per user and `authRequests` per client address (credential routes, bad tokens), per
   * fixed window of `windowSeconds`. Default 600 and 30 per 60 s on every stage.
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
  /** Optional custom domain: both or neither. */
  domain?: { name: string; certificateArn: string };
  /**
   * Where the runbook is read (docs/runbook.md): every alarm description ends with
   * `Runbook: <runbookUrl>#<anchor>`. An https URL of the file (its repository's web view), or
   * by default the relative path, which names the file without knowing where it is hosted.
   */
  runbookUrl: string;
}

export interface RateLimits {
  requests: number;
  authRequests: number;
  windowSeconds: number;
}

/** What the deployed stages apply unless a stage's context says otherwise (api-contract.md "Rate limits"). */
export const DEFAULT_RATE_LIMITS: RateLimits = { requests: 600, authRequests: 30, windowSeconds: 60 };

/**
 * The rate limits from context (`rateLimitRequests`, `authRateLimitRequests`,
 * `rateLimitWindowSeconds`), each a positive whole number, else the defaults. Exported for the
 * functions' construct, which sets them on every counted function.
 */
export function readRateLimits(node: Node): RateLimits {
  return {
    requests: wholeNumber(node, 'rateLimitRequests', DEFAULT_RATE_LIMITS.requests),
    authRequests: wholeNumber(node, 'authRateLimitRequests', DEFAULT_RATE_LIMITS.authRequests),
    windowSeconds: wholeNumber(node, 'rateLimitWindowSeconds', DEFAULT_RATE_LIMITS.windowSeconds),
  };
}

const STAGES: Stage[] = ['dev', 'prod'];

/** The runbook's path in the repository, relative: the repository's address is not known here. */
export const DEFAULT_RUNBOOK = 'docs/runbook.md';

export function readStackConfig(node: Node): StackConfig {
  const stage = String(node.tryGetContext('stage') ?? 'dev');
  if (!STAGES.includes(stage as Stage)) throw new Error(`context "stage" must be one of ${STAGES.join(', ')}; got "${stage}"`);
  const prod = stage === 'prod';
  const corsOrigins = String(node.tryGetContext('corsOrigins') ?? '*')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin))
      throw new Error(`context "corsOrigins": "${origin}" is not an origin`);
  }
  const alarmEmail = node.tryGetContext('alarmEmail') as string | undefined;
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+$/.test(alarmEmail))
    throw new Error(`context "alarmEmail" is not an email: "${alarmEmail}"`);
  const domainName = node.tryGetContext('domainName') as string | undefined;
  const certificateArn = node.tryGetContext('certificateArn') as string | undefined;
  if (!domainName !== !certificateArn) throw new Error('context "domainName" and "certificateArn" go together');
  if (certificateArn && !/^arn:aws[\w-]*:acm:[\w-]+:\d{12}:certificate\/[\w-]+$/.test(certificateArn)) {
    throw new Error(`context "certificateArn" is not an ACM certificate ARN: "${certificateArn}"`);
  }
  const runbookUrl = String(node.tryGetContext('runbookUrl') ?? DEFAULT_RUNBOOK);
  if (!/^(https:\/\/[^/\s#?]+\/[^\s#?]*|[\w.-][\w./-]*)\.md$/.test(runbookUrl) || runbookUrl.length > 400) {
    throw new Error(
      `context "runbookUrl" must be an https URL or a relative path of a .md file, without "#" or "?" (anchors are added per alarm); got "${runbookUrl}"`,
    );
  }
  return {
    stage: stage as Stage,
    deletionProtection: flag(node, 'deletionProtection', prod),
    retainData: flag(node, 'retainData', prod),
    corsOrigins,
    logRetentionDays: prod ? 365 : 30,
    throttle: {
      rateLimit: number(node, 'throttleRate', prod ? 500 : 50),
      burstLimit: number(node, 'throttleBurst', prod ? 1000 : 100),
    },
    authThrottle: {
      rateLimit: number(node, 'authThrottleRate', prod ? 20 : 5),
      burstLimit: number(node, 'authThrottleBurst', prod ? 40 : 10),
    },
    socketThrottle: {
      rateLimit: number(node, 'socketThrottleRate', prod ? 200 : 20),
      burstLimit: number(node, 'socketThrottleBurst', prod ? 400 : 40),
    },
    rateLimits: readRateLimits(node),
    accountLogRole: flag(node, 'accountLogRole', true),
    alarmEmail,
    domain: domainName && certificateArn ? { name: domainName, certificateArn } : undefined,
    runbookUrl,
  };
}

function flag(node: Node, key: string, fallback: boolean): boolean {
  const value = node.tryGetContext(key);
  if (value === undefined) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context "${key}" must be true or false; got "${value}"`);
}

function number(node: Node, key: string, fallback: number): number {
  const value = node.tryGetContext(key);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`context "${key}" must be a positive number; got "${value}"`);
  return parsed;
}

function wholeNumber(node: Node, key: string, fallback: number): number {
  const value = number(node, key, fallback);
  if (!Number.isInteger(value)) throw new Error(`context "${key}" must be a positive whole number; got "${value}"`);
  return value;
}
