import type { StageSettings } from '../settings';

/**
 * `dev` (`npm run synth`, `npm run deploy`) and every named stage `dev-<name>` (`-c stage=dev-ana`:
 * its own stack, TaskBoard-dev-ana, on these settings). Everything here is deployed as written;
 * no `-c` option overrides it (docs/operators.md, "Stages"). Data goes with the stack.
 */
export default {
  deletionProtection: false,
  retainData: false,
  corsOrigins: ['*'],
  logRetentionDays: 30,
  throttle: { rateLimit: 50, burstLimit: 100 },
  // A backstop above the address limiter (docs/rate-limits.md, "The stage's throttle of the
  // credential routes"): 5/s is ten addresses each spending 30 a minute; 60 at once is one
  // address's two quotas around a window boundary.
  authThrottle: { rateLimit: 5, burstLimit: 60 },
  socketThrottle: { rateLimit: 20, burstLimit: 40 },
  rateLimits: { requests: 600, authRequests: 30, windowSeconds: 60 },
  // Named stages share the region's API Gateway logging role setting with this one: whichever
  // stack deployed last holds it, with the same policy (docs/operators.md, "Named stages").
  accountLogRole: true,
  // null: Cognito's own sender (a few dozen messages a day; synth warns). Name an SES sender as prod does.
  mailSender: null,
  alarmEmail: null,
  domain: null,
} satisfies StageSettings;
