import http from 'node:http';
import https from 'node:https';
import { deliveryTarget, pinnedLookup, type Resolver } from './resolve';
import { signatureHeaders } from './signature';

/**
 * One delivery attempt (docs/reference.md "Webhooks"; docs/webhooks.md "Attempts"):
 * the address check at this attempt (`deliveryTarget`: the URL rules, one look-up, every answer
 * judged), then a POST of the exact body string over node:http/https to the checked address only
 * (`pinnedLookup`), signed with the three Standard Webhooks headers. One limit (10 s) covers the
 * look-up, the connection and the answer. Any 2xx is a success; everything else (3xx included:
 * redirects are never followed) is a failure. No proxy, no keep-alive, no cookies: a fresh agent
 * per attempt. The answer's body is read and dropped, at most `maxResponseBytes` of it.
 */

export const ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of an answer's body is read before the connection is closed (the body is never kept). */
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'task-board-webhooks/1';

/**
 * What an attempt came to. `error` is what the deliveries log shows (`last_error`): `http_<status>`,
 * `timeout`, `connection_error`, `tls_error`, or the address check's `forbidden_address`,
 * `invalid_url`, `dns_error`; never a secret, never an address. `detail` is for the service's own
 * log only (the refused address and block, the socket error's code).
 */
export interface AttemptOutcome {
  ok: boolean;
  status_code: number | null;
  error: string | null;
  detail?: string;
}

export interface AttemptInput {
  url: string;
  /** The delivery's id: the `webhook-id` header. */
  id: string;
  /** The exact bytes to send and sign (the event's JSON, serialised once when the delivery was made). */
  body: string;
  /** The signing secrets, newest first (lib/webhooks/signature.ts signingSecrets). */
  secrets: readonly string[];
}

export interface AttemptOptions {
  allowHosts: ReadonlySet<string>;
  /** Injected in unit tests; the operating system's resolver otherwise. */
  resolve?: Resolver;
  /** Injected in unit tests only (a short limit against a server that never answers). */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** The attempt's time (its `webhook-timestamp`); now by default. */
  now?: () => Date;
}

const TLS_CODES = /^(CERT_|ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL)/;

export async function attemptDelivery(input: AttemptInput, options: AttemptOptions): Promise<AttemptOutcome> {
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<AttemptOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ ok: false, status_code: null, error: 'timeout', detail: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
  });
  try {
    return await Promise.race([attempt(input, options, controller.signal), timedOut]);
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

async function attempt(input: AttemptInput, options: AttemptOptions, signal: AbortSignal): Promise<AttemptOutcome> {
  const target = await deliveryTarget(input.url, { allowHosts: options.allowHosts, resolve: options.resolve });
  if (!target.ok) return { ok: false, status_code: null, error: target.error, detail: target.detail };
  if (signal.aborted) return { ok: false, status_code: null, error: 'timeout' };
  const body = Buffer.from(input.body, 'utf8');
  const headers = {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'user-agent': USER_AGENT,
    ...signatureHeaders({ id: input.id, at: (options.now ?? (() => new Date()))(), body: input.body, secrets: input.secrets }),
  };
  const url = new URL(target.url);
  const client = url.protocol === 'https:' ? https : http;
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  return new Promise<AttemptOutcome>((resolve) => {
    const request = client.request(url, {
      method: 'POST',
      headers,
      lookup: pinnedLookup(target),
      // A fresh agent: no keep-alive shared between receivers, and no proxy (a proxy would look the name up itself).
      agent: false,
      signal,
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const outcome: AttemptOutcome =
        status >= 200 && status < 300
          ? { ok: true, status_code: status, error: null }
          : { ok: false, status_code: status, error: `http_${status}` };
      let read = 0;
      const finish = () => {
        resolve(outcome);
        response.destroy();
        request.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= maxBytes) finish();
      });
      response.on('end', finish);
      response.on('error', finish);
      response.on('close', finish);
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (signal.aborted) return resolve({ ok: false, status_code: null, error: 'timeout' });
      const code = error.code ?? error.name;
      resolve({ ok: false, status_code: null, error: TLS_CODES.test(code) ? 'tls_error' : 'connection_error', detail: code });
    });
    request.end(body);
  });
}
