import { App } from 'aws-cdk-lib';
import { DEFAULT_RATE_LIMITS, readRateLimits, readStackConfig } from '../../infra/config';
import { validateStageSettings } from '../../infra/settings';
import { STAGE_FILES } from '../../infra/stages';
import { appProps } from '../infra/app-props';

/**
 * The stages' rate limits (docs/rate-limits.md): 600 per user and 30 per address per
 * 60 s on every deployed stage, set in each stage's committed file (infra/stages/) and nowhere
 * else: the former context keys are refused, naming the setting that replaced them.
 */
describe('rate limits of a stage', () => {
  it('are 600 per user and 30 per address per 60 s on every stage', () => {
    expect(DEFAULT_RATE_LIMITS).toEqual({ requests: 600, authRequests: 30, windowSeconds: 60 });
    for (const stage of Object.keys(STAGE_FILES)) {
      const node = new App(appProps({ context: { stage } })).node;
      expect({ stage, limits: readStackConfig(node).rateLimits }).toEqual({ stage, limits: DEFAULT_RATE_LIMITS });
      expect(readRateLimits(node)).toEqual(DEFAULT_RATE_LIMITS);
    }
  });

  it.each([
    ['rateLimitRequests', 'rateLimits.requests'],
    ['authRateLimitRequests', 'rateLimits.authRequests'],
    ['rateLimitWindowSeconds', 'rateLimits.windowSeconds'],
  ])('refuse the context key %s, naming %s in the stage file', (key, setting) => {
    expect(() => readRateLimits(new App(appProps({ context: { [key]: '10' } })).node)).toThrow(setting);
  });

  it.each([
    ['requests', 0],
    ['authRequests', -3],
    ['windowSeconds', 1.5],
    ['requests', 'many'],
  ])('refuse a stage file whose rateLimits.%s is %p, naming it', (field, value) => {
    const settings = { ...STAGE_FILES.dev, rateLimits: { ...STAGE_FILES.dev.rateLimits, [field]: value } };
    expect(() => validateStageSettings(settings, 'infra/stages/dev.ts')).toThrow(`rateLimits.${field}`);
  });
});
