import type { StageSettings } from '../settings';

/**
 * `prod` (`-c stage=prod`, the pipeline's last stage): the table protected from deletion, the
 * table, pool and logs kept if the stack is deleted, a year of logs. Everything here is deployed
 * as written, from a laptop or the pipeline alike; change it in a reviewed commit.
 */
export default {
  deletionProtection: true,
  retainData: true,
  // No cookies are used, so any origin is safe; list your front ends to narrow it.
  corsOrigins: ['*'],
  logRetentionDays: 365,
  throttle: { rateLimit: 500, burstLimit: 1000 },
  // A backstop above the address limiter, below Cognito's quotas (docs/rate-limits.md, "The
  // stage's throttle of the credential routes"): 30/s is sixty addresses each spending 30 a
  // minute, and four password sign-in routes at 30/s are UserAuthentication's 120/s.
  authThrottle: { rateLimit: 30, burstLimit: 60 },
  socketThrottle: { rateLimit: 200, burstLimit: 400 },
  rateLimits: { requests: 600, authRequests: 30, windowSeconds: 60 },
  accountLogRole: true,
  // The pool's mail (verification and reset codes) through Amazon SES: an address verified in SES
  // in that region, with the SES account out of the sandbox. Replace it with your own sender.
  mailSender: { from: 'no-reply@example.com', name: 'Task board', sesRegion: 'eu-west-1' },
  // Your on-call address (it gets a confirmation mail on the first deploy), or null to subscribe
  // to the AlarmTopicArn output some other way.
  alarmEmail: null,
  // { name: 'api.example.com', certificateArn: 'arn:aws:acm:<region>:<account>:certificate/<id>' }
  domain: null,
} satisfies StageSettings;
