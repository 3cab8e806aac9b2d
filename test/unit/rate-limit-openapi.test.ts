import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApiDocument, documentedRows } from '../../lib/http/openapi';
import { rateLimitFields } from '../../lib/http/rate-limit-fields';
import { rateLimitOf } from '../../lib/rows/row';

/**
 * The rate limits in the API description, from the route table (lib/rows/row.ts `rateLimitOf`):
 * every answer of a counted operation documents RateLimit-Policy and RateLimit, and its 429 is the
 * service's problem (`rate_limited`, Retry-After) as well as the gateway's throttling; operations
 * that are not counted document neither.
 */
const document = buildOpenApiDocument() as any;
const operationOf = (path: string, method: string) => document.paths[path][method.toLowerCase()];
const rows = documentedRows();

describe('the rate limits in the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('counts the credential routes per address, every token route per user, and nothing else', () => {
    const policies = Object.fromEntries(rows.map(([id, row]) => [id, rateLimitOf(row) ?? 'none']));
    expect(
      Object.entries(policies)
        .filter(([, policy]) => policy === 'address')
        .map(([id]) => id)
        .sort(),
    ).toEqual(['auth.login', 'auth.logout', 'auth.password.forgot', 'auth.password.reset', 'auth.refresh', 'auth.register']);
    expect(
      Object.entries(policies)
        .filter(([, policy]) => policy === 'none')
        .map(([id]) => id)
        .sort(),
    ).toEqual(['asyncapi', 'docs', 'docs.file', 'health', 'openapi']);
    for (const [id, row] of rows)
      if (row.access.scope !== 'public') expect({ id, policy: policies[id] }).toEqual({ id, policy: 'user' });
    expect(policies['realtime.tickets']).toBe('user');
  });

  it.each(rows)('%s documents the fields on every answer exactly when it is counted', (_id, row) => {
    const responses = operationOf(row.path, row.method).responses as Record<string, any>;
    const counted = rateLimitOf(row) !== undefined;
    for (const [status, response] of Object.entries(responses)) {
      const headers = Object.keys(response.headers ?? {});
      expect({ status, fields: headers.filter((name) => name.startsWith('RateLimit')).sort() }).toEqual({
        status,
        fields: counted ? ['RateLimit', 'RateLimit-Policy'] : [],
      });
    }
    if (!counted) {
      expect(responses['429']).toEqual({ $ref: '#/components/responses/TooManyRequests' });
      return;
    }
    const tooMany = responses['429'];
    expect(tooMany.headers['Retry-After'].required).toBe(true);
    expect(tooMany.content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/RateLimitProblem' });
    expect(tooMany.content['application/problem+json'].example).toMatchObject({ status: 429, code: 'rate_limited' });
    // API Gateway's own throttling can still answer first.
    expect(tooMany.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/GatewayMessage' });
  });

  it('describes the fields with patterns that the service writes and that reject other shapes', () => {
    const policy = new RegExp(document.components.headers['RateLimit-Policy'].schema.pattern);
    const limit = new RegExp(document.components.headers.RateLimit.schema.pattern);
    for (const state of [
      { policy: 'user' as const, quota: 600, windowSeconds: 60, remaining: 599, resetSeconds: 42 },
      { policy: 'address' as const, quota: 30, windowSeconds: 60, remaining: 0, resetSeconds: 1 },
    ]) {
      const fields = rateLimitFields(state);
      expect(fields['ratelimit-policy']).toMatch(policy);
      expect(fields.ratelimit).toMatch(limit);
    }
    for (const wrong of ['user;q=1;w=1', '"user";w=1;q=1', '"user";q=1.0;w=1', '"other";q=1;w=1'])
      expect(wrong).not.toMatch(policy);
  });
});
