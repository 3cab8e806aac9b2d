/**
 * Environment contract between CDK (which sets these on each function) and the code (which reads
 * them once, at cold start, in the module that needs them). A missing variable fails the cold
 * start loudly instead of failing some later request obscurely.
 */
export const ENV = {
  tableName: 'TABLE_NAME',
  userPoolId: 'USER_POOL_ID',
  userPoolClientId: 'USER_POOL_CLIENT_ID',
  tokenIssuer: 'TOKEN_ISSUER',
  /**
   * The pool's signing keys as JWKS JSON, for an http:// issuer only (the local Cognito emulator,
   * whose http JWKS aws-jwt-verify will not fetch): the local stack and `npm run sam:env -- local`
   * set it. With an https:// issuer (every deployed stack) it is refused at cold start, so a
   * deployed function always fetches its pool's keys over https.
   */
  tokenJwks: 'TOKEN_JWKS',
  /** The WebSocket address clients connect to (wss://… on AWS, ws://… locally), handed out with tickets. */
  socketUrl: 'SOCKET_URL',
  /** The connections management endpoint of that stage (https://…/<stage>), for PostToConnection. */
  socketCallbackUrl: 'SOCKET_CALLBACK_URL',
  /** Lifetime of a socket ticket in seconds (default 60). */
  ticketSeconds: 'TICKET_SECONDS',
  /** How long a board's event log keeps each event, in seconds (default 604800, 7 days; realtime.md). */
  eventRetentionSeconds: 'EVENT_RETENTION_SECONDS',
  /**
   * The length in seconds of one of a personal access token's `expires_in_days` days (default
   * 86400): set short on a local stack so that tests can watch a token expire.
   */
  personalTokenDaySeconds: 'PERSONAL_TOKEN_DAY_SECONDS',
  /** Per-user quota of requests per window (docs/rate-limits.md); unset locally = no limit. */
  rateLimitRequests: 'RATE_LIMIT_REQUESTS',
  /** The length of a rate-limit window in seconds, for both policies. */
  rateLimitWindowSeconds: 'RATE_LIMIT_WINDOW_SECONDS',
  /** Per-address quota of the credential routes and of requests with a bad token, per window. */
  authRateLimitRequests: 'AUTH_RATE_LIMIT_REQUESTS',
  /** Webhook hosts let through the address check (comma-separated names or IP literals); unset on AWS. */
  webhookAllowHosts: 'WEBHOOK_ALLOW_HOSTS',
  /** The webhook deliveries queue's URL (SQS on AWS, infra/local/sqs.ts locally). */
  webhookQueueUrl: 'WEBHOOK_QUEUE_URL',
  /** The KMS key (id or ARN) that encrypts webhook secrets (infra/local/kms.ts locally). */
  webhookKeyId: 'WEBHOOK_KEY_ID',
  /** Delays between a delivery's attempts in seconds, comma-separated (webhooks.md); default about a day. */
  webhookRetrySchedule: 'WEBHOOK_RETRY_SCHEDULE',
} as const;

export type EnvName = (typeof ENV)[keyof typeof ENV];

export function requireEnv(name: EnvName): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

/** A positive whole number of seconds from the environment, or the default when unset. */
export function secondsFromEnv(name: EnvName, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds <= 0)
    throw new Error(`${name} must be a positive whole number of seconds, not ${value}`);
  return seconds;
}
