import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import {
  type AddressChoice,
  checkWebhookUrl,
  chooseAddress,
  type ResolvedAddress,
  type WebhookTarget,
} from '../domain/webhook-address';

/**
 * The DNS half of the webhook address check (lib/domain/webhook-address.ts holds the rules; this
 * module only looks names up). At every attempt the URL is checked again, its host is resolved
 * once, every answer is judged, and the caller connects to the address that was judged, through
 * `pinnedLookup`, never by looking the name up a second time: a name that answers public to the
 * check and private to the connection (DNS rebinding) has no second answer to give.
 */

/** A name's addresses, A and AAAA. Injected: unit tests answer what they like. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/**
 * The operating system's resolver, as a connection would use it (getaddrinfo: /etc/hosts, then DNS;
 * every address of both families, in Node's default order, which is the resolver's own unless
 * --dns-result-order says otherwise: the order decides only which checked address comes first).
 */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export type DeliveryTarget = WebhookTarget & Extract<AddressChoice, { ok: true }>;

export type DeliveryRefusal = {
  readonly ok: false;
  /**
   * What the deliveries log shows as `last_error`: `forbidden_address` (the spec's), `invalid_url`
   * (the URL no longer meets the rules, e.g. `http` for a host no longer allowed), `dns_error`.
   */
  readonly error: 'forbidden_address' | 'invalid_url' | 'dns_error';
  /** For the service's own log only (the address and block refused, or the resolver's code): never shown to the owner. */
  readonly detail: string;
};

/**
 * Where one attempt may connect: the URL's rules, then (for a host name) one look-up and the verdict
 * on every answer. `allowHosts` is `parseAllowHosts(process.env.WEBHOOK_ALLOW_HOSTS)`.
 */
export async function deliveryTarget(
  url: string,
  options: { allowHosts: ReadonlySet<string>; resolve?: Resolver },
): Promise<DeliveryTarget | DeliveryRefusal> {
  const target = checkWebhookUrl(url, options.allowHosts);
  if (!target.ok)
    return {
      ok: false,
      error: target.reason === 'forbidden_address' ? 'forbidden_address' : 'invalid_url',
      detail: `${target.reason}: ${target.detail}`,
    };
  let answers: readonly ResolvedAddress[] = [];
  if (!target.literal) {
    try {
      answers = await (options.resolve ?? systemResolver)(target.host);
    } catch (error) {
      return { ok: false, error: 'dns_error', detail: (error as NodeJS.ErrnoException).code ?? 'lookup failed' };
    }
  }
  const choice = chooseAddress(target, answers);
  if (!choice.ok) {
    if (choice.error === 'no_address') return { ok: false, error: 'dns_error', detail: 'no address' };
    return { ok: false, error: 'forbidden_address', detail: `${choice.address}: ${choice.range}` };
  }
  return { ...target, ...choice };
}

/**
 * A `lookup` for `http.request`/`https.request` (and `net.connect`) that answers only with the
 * addresses `deliveryTarget` checked, for the target's own host, and fails for any other name. The
 * URL keeps its host name, so the Host header and TLS (SNI and the certificate's name) are the
 * name's, while the socket goes to the checked address. Node asks with `all: true` when it may try
 * several addresses (autoSelectFamily, on by default since Node.js 20), else for one.
 */
export function pinnedLookup(target: DeliveryTarget): LookupFunction {
  const name = target.host.startsWith('[') ? target.host.slice(1, -1) : target.host;
  return (hostname: string, options: LookupOptions, callback) => {
    if (hostname !== name) {
      const error: NodeJS.ErrnoException = new Error(`lookup of ${hostname}: only ${name} is pinned`);
      error.code = 'ENOTFOUND';
      process.nextTick(callback, error, '', 0);
      return;
    }
    const family: unknown = options.family;
    const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
    const addresses: LookupAddress[] = target.addresses.filter((a) => wanted === 0 || a.family === wanted);
    if (addresses.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`lookup of ${hostname}: no checked IPv${wanted} address`);
      error.code = 'ENOTFOUND';
      process.nextTick(callback, error, '', 0);
      return;
    }
    if (options.all) process.nextTick(callback, null, addresses);
    else process.nextTick(callback, null, addresses[0]!.address, addresses[0]!.family);
  };
}
