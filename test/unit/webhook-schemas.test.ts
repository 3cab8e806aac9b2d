import type * as v from 'valibot';
import { deliveriesQuery, WEBHOOK_URL_MAX_LENGTH } from '../../lib/contract/schemas';
import { checkValue } from '../../lib/contract/validation';
import {
  createWebhookBody,
  updateWebhookBody,
  WEBHOOK_ALLOW_HOSTS_VARIABLE,
  webhookAllowHosts,
} from '../../lib/contract/webhook-schemas';
import { BOARD_EVENT_KINDS } from '../../lib/domain/events';
import { MAX_WEBHOOK_URL_LENGTH } from '../../lib/domain/webhook-address';
import { ENV } from '../../lib/runtime/config';

/**
 * The webhook bodies of lib/contract/webhook-schemas.ts as the routes apply them (checkValue, as
 * lib/http/parse.ts does): the URL rules with the tricks attackers use, each refusal naming the
 * rule and never the value; the event types; the description; PATCH's null = unchanged. The unit
 * environment leaves WEBHOOK_ALLOW_HOSTS unset, as on AWS: nothing is allowed through.
 */

const issuesOf = (schema: v.GenericSchema, value: unknown) => {
  const result = checkValue(schema, value);
  return 'issues' in result ? result.issues : [];
};
const outputOf = (schema: v.GenericSchema, value: unknown) => {
  const result = checkValue(schema, value);
  if (!('output' in result)) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  return result.output as Record<string, unknown>;
};

it('the variable the contract reads is the one lib/runtime/config.ts names', () => {
  expect(WEBHOOK_ALLOW_HOSTS_VARIABLE).toBe(ENV.webhookAllowHosts);
  expect(process.env[ENV.webhookAllowHosts]).toBeUndefined();
  expect([...webhookAllowHosts()]).toEqual([]);
});

it("the response schemas' URL limit is the address rules' (schemas.ts repeats it so that no other bundle loads those rules)", () => {
  expect(WEBHOOK_URL_MAX_LENGTH).toBe(MAX_WEBHOOK_URL_LENGTH);
});

describe('url', () => {
  it.each([
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://0x7f.0.0.1/',
    'https://0x7f000001/',
    'https://127.1/',
    'https://%31%32%37.0.0.1/',
    'https://１２７.０.０.１/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::1]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[fd00::1]/',
    'https://[fe80::1]/',
    'https://[64:ff9b::a9fe:a9fe]/',
    'https://169.254.169.254/latest/meta-data/',
    'https://0.0.0.0/',
    'https://0/',
    'https://10.1.2.3/',
    'https://172.16.0.1/',
    'https://192.168.0.1/',
    'https://100.64.0.1/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'http://example.com/',
    'http://localhost/',
    'ftp://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    '//example.com/hook',
    'example.com',
    '',
    `https://example.com/${'a'.repeat(2029)}`,
  ])('%s is refused, naming the rule and not the value', (url) => {
    const issues = issuesOf(createWebhookBody(), { url });
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('url');
    expect(issues[0]!.message).toMatch(
      /^must (?:be an absolute https URL|be an https URL|be at most 2048 characters|not point to a private or otherwise non-public address)$/,
    );
    if (url) expect(issues[0]!.message).not.toContain(url);
  });

  it('a URL of exactly 2,048 characters, public literals and host names are accepted, stored normalised', () => {
    const long = `https://example.com/${'a'.repeat(2028)}`;
    expect(outputOf(createWebhookBody(), { url: long }).url).toBe(long);
    expect(outputOf(createWebhookBody(), { url: 'HTTPS://Example.COM:443/a/../b' }).url).toBe('https://example.com/b');
    expect(outputOf(createWebhookBody(), { url: 'https://8.8.8.8/' }).url).toBe('https://8.8.8.8/');
    expect(outputOf(createWebhookBody(), { url: 'https://[2001:4860:4860::8888]/' }).url).toBe('https://[2001:4860:4860::8888]/');
  });

  it('not a string is refused by type', () => {
    expect(issuesOf(createWebhookBody(), { url: 42 })).toEqual([{ path: 'url', message: 'must be a string' }]);
    expect(issuesOf(createWebhookBody(), {})).toEqual([{ path: 'url', message: 'is required' }]);
  });
});

describe('events, description, active', () => {
  it('every board event kind, each once, in any order; empty or omitted: all', () => {
    expect(
      outputOf(createWebhookBody(), { url: 'https://example.com/', events: [...BOARD_EVENT_KINDS].reverse() }).events,
    ).toEqual([...BOARD_EVENT_KINDS].reverse());
    expect(outputOf(createWebhookBody(), { url: 'https://example.com/', events: [] }).events).toEqual([]);
    expect(outputOf(createWebhookBody(), { url: 'https://example.com/' }).events).toBeUndefined();
  });

  it.each([
    [['card.exploded'], 'events.0'],
    [['access.revoked'], 'events.0'],
    [['webhook.ping'], 'events.0'],
    [['Card.Moved'], 'events.0'],
    [['card.moved', 'card.moved'], 'events'],
    ['card.moved', 'events'],
    [[1], 'events.0'],
  ])('events %j is refused at %s', (events, path) => {
    expect(issuesOf(createWebhookBody(), { url: 'https://example.com/', events }).map((issue) => issue.path)).toEqual([path]);
  });

  it('a description of up to 256 characters (not UTF-16 units), or null', () => {
    expect(outputOf(createWebhookBody(), { url: 'https://example.com/', description: '😀'.repeat(256) }).description).toBe(
      '😀'.repeat(256),
    );
    expect(issuesOf(createWebhookBody(), { url: 'https://example.com/', description: 'x'.repeat(257) })).toHaveLength(1);
    expect(issuesOf(createWebhookBody(), { url: 'https://example.com/', description: '\uD800' })).toHaveLength(1);
    expect(outputOf(createWebhookBody(), { url: 'https://example.com/', description: null }).description).toBeNull();
  });

  it('PATCH: every field optional and nullable; active a boolean; the URL rules as at creation', () => {
    expect(outputOf(updateWebhookBody(), {})).toEqual({});
    expect(outputOf(updateWebhookBody(), { url: null, events: null, description: null, active: null })).toEqual({
      url: null,
      events: null,
      description: null,
      active: null,
    });
    expect(issuesOf(updateWebhookBody(), { active: 'true' }).map((issue) => issue.path)).toEqual(['active']);
    expect(issuesOf(updateWebhookBody(), { url: 'https://[::1]/' }).map((issue) => issue.path)).toEqual(['url']);
  });

  it('fields the routes do not name are dropped', () => {
    expect(outputOf(createWebhookBody(), { url: 'https://example.com/', secret: 'whsec_x', id: 'x', active: false })).toEqual({
      url: 'https://example.com/',
    });
  });
});

describe('GET /webhooks/{id}/deliveries limit', () => {
  it('1 to 100, default 20; anything else is refused', () => {
    expect(outputOf(deliveriesQuery(), {})).toEqual({ limit: 20 });
    expect(outputOf(deliveriesQuery(), { limit: '1' })).toEqual({ limit: 1 });
    expect(outputOf(deliveriesQuery(), { limit: '100' })).toEqual({ limit: 100 });
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '', '1e2'])
      expect(issuesOf(deliveriesQuery(), { limit })).toHaveLength(1);
  });
});
