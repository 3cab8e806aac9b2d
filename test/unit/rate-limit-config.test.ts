import { App } from 'aws-cdk-lib';
import { DEFAULT_RATE_LIMITS, readRateLimits, readStackConfig } from '../../infra/config';

/** The stage's rate limits (api-contract.md "Rate limits"): 600 and 30 per 60 s unless the context says otherwise. */
describe('rate limits of a stage', () => {
  it('default to 600 per user and 30 per address per 60 s on every stage', () => {
    expect(DEFAULT_RATE_LIMITS).toEqual({ requests: 600, authRequests: 30, windowSeconds: 60 });
    for (const stage of ['dev', 'prod'])
      expect(readStackConfig(new App({ context: { stage } }).node).rateLimits).toEqual(DEFAULT_RATE_LIMITS);
  });

  it('take each value from the context on its own', () => {
    const app = new App({ context: { rateLimitRequests: '120', authRateLimitRequests: 10, rateLimitWindowSeconds: '10' } });
    expect(readRateLimits(app.node)).toEqual({ requests: 120, authRequests: 10, windowSeconds: 10 });
  });

  it.each([
    ['rateLimitRequests', '0'],
    ['authRateLimitRequests', '-3'],
    ['rateLimitWindowSeconds', '1.5'],
    ['rateLimitRequests', 'many'],
  ])('reject %s=%s, naming the key', (key, value) => {
    expect(() => readRateLimits(new App({ context: { [key]: value } }).node)).toThrow(new RegExp(`"${key}"`));
  });
});
