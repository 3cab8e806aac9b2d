import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may be delivered (docs/reference.md, "Webhooks"; docs/webhooks.md says why). The
 * pure half of the service's SSRF boundary: the URL rules (checked when a webhook is created or
 * changed, and again at every attempt) and the verdict on each address a name resolves to. The DNS
 * look-up itself is lib/webhooks/resolve.ts; nothing here does I/O (`BlockList` is node:net's
 * in-memory address matcher: it opens no socket).
 *
 * Deny by default: an IPv6 address is public only inside global unicast (2000::/3) and outside
 * every special-purpose block below; an IPv4 address is public when no block below holds it. The
 * blocks are the IANA special-purpose registries' entries that are not globally reachable, plus
 * multicast and the deprecated ones. Host names and addresses are compared in the form the WHATWG
 * URL parser gives them, so `2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1` and `１２７.０.０.１` are
 * all 127.0.0.1 before any rule looks at them.
 */

/** The longest webhook URL, in characters (spec: "at most 2,048 characters"). */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface AddressBlock {
  /** The block, as an address and prefix length. */
  readonly cidr: string;
  /** What it is, as the registry names it. */
  readonly name: string;
  /** Where it is defined. */
  readonly source: string;
}

/** IPv4 blocks never delivered to (IANA IPv4 Special-Purpose Address Registry, RFC 6890, and the address space registry). */
export const IPV4_BLOCKS: readonly AddressBlock[] = [
  { cidr: '0.0.0.0/8', name: 'this network (0.0.0.0 included)', source: 'RFC 791, RFC 1122' },
  { cidr: '10.0.0.0/8', name: 'private use', source: 'RFC 1918' },
  { cidr: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT)', source: 'RFC 6598' },
  { cidr: '127.0.0.0/8', name: 'loopback', source: 'RFC 1122' },
  { cidr: '169.254.0.0/16', name: 'link-local (169.254.169.254, the instance metadata service, included)', source: 'RFC 3927' },
  { cidr: '172.16.0.0/12', name: 'private use', source: 'RFC 1918' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments (DS-Lite, NAT64 discovery)', source: 'RFC 6890' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', source: 'RFC 5737' },
  { cidr: '192.88.99.0/24', name: '6to4 relay anycast (deprecated)', source: 'RFC 7526' },
  { cidr: '192.168.0.0/16', name: 'private use', source: 'RFC 1918' },
  { cidr: '198.18.0.0/15', name: 'benchmarking', source: 'RFC 2544' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', source: 'RFC 5737' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', source: 'RFC 5737' },
  { cidr: '224.0.0.0/4', name: 'multicast', source: 'RFC 5771' },
  { cidr: '240.0.0.0/4', name: 'reserved (255.255.255.255, limited broadcast, included)', source: 'RFC 1112, RFC 919' },
];

/**
 * IPv6 blocks never delivered to, named so that a refusal says why (IANA IPv6 Special-Purpose
 * Address Registry and address space registry). Anything outside 2000::/3 is refused even when no
 * row names it; 64:ff9b::/96 (NAT64) is judged by the IPv4 address it carries.
 */
export const IPV6_BLOCKS: readonly AddressBlock[] = [
  { cidr: '::/128', name: 'unspecified', source: 'RFC 4291' },
  { cidr: '::1/128', name: 'loopback', source: 'RFC 4291' },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped', source: 'RFC 4291' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', source: 'RFC 4291' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation', source: 'RFC 8215' },
  { cidr: '100::/64', name: 'discard-only', source: 'RFC 6666' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (Teredo, benchmarking, ORCHID included)', source: 'RFC 2928' },
  { cidr: '2001:db8::/32', name: 'documentation', source: 'RFC 3849' },
  { cidr: '2002::/16', name: '6to4', source: 'RFC 3056, RFC 7526' },
  { cidr: '3fff::/20', name: 'documentation', source: 'RFC 9637' },
  { cidr: '5f00::/16', name: 'segment routing SIDs', source: 'RFC 9602' },
  { cidr: 'fc00::/7', name: 'unique-local (fd00:ec2::254, the instance metadata service, included)', source: 'RFC 4193' },
  { cidr: 'fe80::/10', name: 'link-local', source: 'RFC 4291' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)', source: 'RFC 3879' },
  { cidr: 'ff00::/8', name: 'multicast', source: 'RFC 4291' },
];

/** The well-known NAT64 prefix: 64:ff9b::a.b.c.d reaches a.b.c.d through a translator (RFC 6052). */
const NAT64 = '64:ff9b::/96';
const GLOBAL_UNICAST = '2000::/3';

type Matcher = { list: BlockList; name: string };

function matcher(cidr: string, family: 'ipv4' | 'ipv6', name: string): Matcher {
  const [address, prefix] = cidr.split('/') as [string, string];
  const list = new BlockList();
  list.addSubnet(address, Number(prefix), family);
  return { list, name };
}

const v4Matchers = IPV4_BLOCKS.map((b) => matcher(b.cidr, 'ipv4', b.name));
const v6Matchers = IPV6_BLOCKS.map((b) => matcher(b.cidr, 'ipv6', b.name));
// The IPv4 blocks again, as NAT64 addresses: 127.0.0.0/8 is 64:ff9b::127.0.0.0/104, and so on.
const nat64Matchers = IPV4_BLOCKS.map((b) => {
  const [address, prefix] = b.cidr.split('/') as [string, string];
  return matcher(`64:ff9b::${address}/${96 + Number(prefix)}`, 'ipv6', `NAT64 of ${b.name}`);
});
const nat64 = matcher(NAT64, 'ipv6', 'NAT64');
const globalUnicast = matcher(GLOBAL_UNICAST, 'ipv6', 'global unicast');

export type AddressVerdict =
  | { readonly public: true; readonly family: 4 | 6 }
  | { readonly public: false; readonly family: 4 | 6 | null; readonly range: string };

/**
 * Whether an address (as a resolver or the URL parser writes it: `127.0.0.1`, `::1`, `FD00:EC2::254`)
 * may be connected to, and if not, the block that holds it. Not an address → not public.
 */
export function classifyAddress(address: string): AddressVerdict {
  const family = isIP(address);
  if (family === 4) {
    const hit = v4Matchers.find((m) => m.list.check(address, 'ipv4'));
    return hit ? { public: false, family: 4, range: hit.name } : { public: true, family: 4 };
  }
  if (family === 6) {
    // A zone index (fe80::1%eth0) names a local interface: never a public address.
    if (address.includes('%')) return { public: false, family: 6, range: 'scoped (zone index)' };
    const hit = v6Matchers.find((m) => m.list.check(address, 'ipv6'));
    if (hit) return { public: false, family: 6, range: hit.name };
    if (nat64.list.check(address, 'ipv6')) {
      const inner = nat64Matchers.find((m) => m.list.check(address, 'ipv6'));
      return inner ? { public: false, family: 6, range: inner.name } : { public: true, family: 6 };
    }
    if (!globalUnicast.list.check(address, 'ipv6'))
      return { public: false, family: 6, range: 'outside global unicast (2000::/3)' };
    return { public: true, family: 6 };
  }
  return { public: false, family: null, range: 'not an IP address' };
}

/**
 * `WEBHOOK_ALLOW_HOSTS`: comma-separated host names or IP literals (IPv6 with or without brackets),
 * each compared after the URL parser's normalisation (`LOCALHOST` is `localhost`, `[::1]` and `::1`
 * the same host). Exact names only: no wildcards, no ports. A malformed entry throws, naming it, so a
 * mistyped setting fails the cold start instead of refusing or allowing the wrong host.
 */
export function parseAllowHosts(value: string | undefined): ReadonlySet<string> {
  const hosts = new Set<string>();
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const host = entry.includes(':') && !entry.startsWith('[') ? `[${entry}]` : entry;
    let url: URL | null = null;
    try {
      url = new URL(`http://${host}/`);
    } catch {
      url = null;
    }
    if (!url || url.host !== url.hostname || url.pathname !== '/' || url.username || url.password || url.search || url.hash)
      throw new Error(`WEBHOOK_ALLOW_HOSTS: "${entry}" is not a host name or an IP literal`);
    hosts.add(url.hostname);
  }
  return hosts;
}

/** A webhook URL that passed the rules: what to store and deliver to. */
export interface WebhookTarget {
  /** The URL as the parser normalised it (the form that was checked; store and deliver this one). */
  readonly url: string;
  readonly protocol: 'https:' | 'http:';
  /** The host as the URL has it: a lower-case (punycode) name, a dotted IPv4 or a bracketed IPv6. */
  readonly host: string;
  /** The host is in `WEBHOOK_ALLOW_HOSTS`: `http` and non-public addresses are allowed for it. */
  readonly allowListed: boolean;
  /** The address when the host is an IP literal (no look-up then), else null. */
  readonly literal: { readonly address: string; readonly family: 4 | 6 } | null;
}

export type UrlRefusal = {
  readonly ok: false;
  /**
   * `malformed`: not an absolute URL; `too_long`: over 2,048 characters; `scheme`: not https (or
   * http for an allowed host); `credentials`: a user name or password before the host;
   * `forbidden_address`: an IP literal of a non-public block.
   */
  readonly reason: 'malformed' | 'too_long' | 'scheme' | 'credentials' | 'forbidden_address';
  /** For the 400's `errors[].message` on `url`: names the rule, never echoes the value. */
  readonly detail: string;
};

/**
 * The rules a webhook URL must meet whatever its host resolves to: an absolute `https` URL of at
 * most 2,048 characters (`http` only for an allowed host), and, when the host is an IP literal, a
 * public address unless allowed. Run at create and change time (a refusal is a 400) and at every
 * attempt (the allowed hosts may have changed since).
 */
export function checkWebhookUrl(input: unknown, allowHosts: ReadonlySet<string>): ({ ok: true } & WebhookTarget) | UrlRefusal {
  if (typeof input !== 'string') return { ok: false, reason: 'malformed', detail: 'must be a string' };
  if (input.length > MAX_WEBHOOK_URL_LENGTH)
    return { ok: false, reason: 'too_long', detail: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: 'malformed', detail: 'must be an absolute https URL' };
  }
  // Normalising can lengthen a URL (an IDN host becomes punycode): the stored form is held to the limit too.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH)
    return { ok: false, reason: 'too_long', detail: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  const allowListed = allowHosts.has(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowListed))
    return { ok: false, reason: 'scheme', detail: 'must be an https URL' };
  // Both schemes are special, so the parser guarantees a non-empty host and has already turned any
  // number-like host into a dotted IPv4 (or refused it).
  const literal = literalOf(url.hostname);
  if (literal && !allowListed) {
    const verdict = classifyAddress(literal.address);
    if (!verdict.public)
      return { ok: false, reason: 'forbidden_address', detail: 'must not point to a private or otherwise non-public address' };
  }
  // After the address rule, so that a non-public host is named as such whatever precedes it.
  // `https://user:pass@host/`: the credentials would be stored and shown to every owner in clear
  // (the URL is no secret), and some clients send them as Basic authorisation. A receiver that
  // wants to know the sender checks the signature instead.
  if (url.username !== '' || url.password !== '')
    return { ok: false, reason: 'credentials', detail: 'must not carry a user name or password' };
  return { ok: true, url: url.href, protocol: url.protocol, host: url.hostname, allowListed, literal };
}

function literalOf(hostname: string): { address: string; family: 4 | 6 } | null {
  if (hostname.startsWith('[')) return { address: hostname.slice(1, -1), family: 6 };
  return isIP(hostname) === 4 ? { address: hostname, family: 4 } : null;
}

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

export type AddressChoice =
  | {
      readonly ok: true;
      /** The address to connect to: the first the resolver gave. */
      readonly address: string;
      readonly family: 4 | 6;
      /** Every address that was checked, in the resolver's order (for a client that tries several). */
      readonly addresses: readonly ResolvedAddress[];
    }
  | {
      readonly ok: false;
      readonly error: 'forbidden_address';
      /** For the service's own log only: the deliveries log says `forbidden_address` and no more. */
      readonly address: string;
      readonly range: string;
    }
  | { readonly ok: false; readonly error: 'no_address' };

/**
 * The verdict on what the target's host resolved to (A and AAAA, every answer): refused when any
 * answer is not public, unless the host is allowed. One private answer refuses the name, so which
 * answer a client would have picked never matters; the caller connects only to `addresses`.
 */
export function chooseAddress(target: WebhookTarget, answers: readonly ResolvedAddress[]): AddressChoice {
  const checked: ResolvedAddress[] = [];
  for (const { address } of target.literal ? [target.literal] : answers) {
    const verdict = classifyAddress(address);
    // Not an address at all is refused even for an allowed host: there is nothing to connect to.
    if (!verdict.public && (verdict.family === null || !target.allowListed))
      return { ok: false, error: 'forbidden_address', address, range: verdict.range };
    checked.push({ address, family: verdict.family! });
  }
  const [first] = checked;
  if (!first) return { ok: false, error: 'no_address' };
  return { ok: true, address: first.address, family: first.family, addresses: checked };
}
