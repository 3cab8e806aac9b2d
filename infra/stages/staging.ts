import type { StageSettings } from '../settings';

/**
 * `staging`: where the pipeline (.github/workflows/deploy.yml) deploys every change first and
 * runs the smoke test, before production's approval. Production's throttles and quotas, so that
 * the smoke test meets what production will; but a month of logs, and the smoke test's data
 * goes with the stack.
 */
export default {
  deletionProtection: false,
  retainData: false,
  corsOrigins: ['*'],
  logRetentionDays: 30,
  throttle: { rateLimit: 500, burstLimit: 1000 },
  authThrottle: { rateLimit: 30, burstLimit: 60 },
  socketThrottle: { rateLimit: 200, burstLimit: 400 },
  rateLimits: { requests: 600, authRequests: 30, windowSeconds: 60 },
  accountLogRole: true,
  // null: Cognito's own sender (a few dozen messages a day; synth warns). Name an SES sender as prod does.
  mailSender: null,
  alarmEmail: null,
  domain: null,
} satisfies StageSettings;
