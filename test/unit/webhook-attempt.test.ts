import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { parseAllowHosts } from '../../lib/domain/webhook-address';
import { attemptDelivery } from '../../lib/webhooks/attempt';
import type { Resolver } from '../../lib/webhooks/resolve';
import { deliveryId, newSecret } from '../../lib/webhooks/signature';
import { closeServers } from '../support/http-servers';

/**
 * One delivery attempt against real HTTP servers on 127.0.0.1 (allowed, as the local stack allows
 * it): what a receiver gets (the exact body, its type, the three Standard Webhooks headers,
 * verified with the published `standardwebhooks` verifier), which answers count as success, that
 * a redirect is never followed, that a receiver that never answers ends the attempt with
 * `timeout` (a short injected limit: nothing here depends on speed), and that a name resolving to
 * a private address is never connected to (an injected resolver).
 */

type Received = { method: string; url: string; headers: IncomingMessage['headers']; body: string };
type Handler = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

const servers: Server[] = [];
afterAll(async () => {
  await closeServers(servers);
});

async function receiver(handler: Handler): Promise<{ url: string; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const got = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(got);
      handler(req, res, got);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook?x=1`, port, received };
}

const allowHosts = parseAllowHosts('127.0.0.1,localhost');
const secret = newSecret();
const event = {
  type: 'card.created',
  event_id: 'e5b7c1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b',
  board_id: 'b1',
  actor_id: 'u1',
  occurred_at: '2026-11-27T05:00:00.000Z',
  seq: 7,
  card: { id: 'c1', title: 'Über ✓ 😀' },
};
const body = JSON.stringify(event);
const id = deliveryId('w1', event.event_id);
const input = (url: string) => ({ url, id, body, secrets: [secret] });

describe('a delivery attempt', () => {
  it('POSTs the exact body, as JSON, signed so that the standardwebhooks verifier accepts it', async () => {
    const { url, received } = await receiver((_req, res) => res.writeHead(204).end());
    const outcome = await attemptDelivery(input(url), { allowHosts });
    expect(outcome).toEqual({ ok: true, status_code: 204, error: null });
    expect(received).toHaveLength(1);
    const [got] = received;
    expect(got!.method).toBe('POST');
    expect(got!.url).toBe('/hook?x=1');
    expect(got!.body).toBe(body);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-id']).toBe(id);
    expect(got!.headers['webhook-timestamp']).toMatch(/^\d+$/);
    const verified = new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>);
    expect(verified).toEqual(event);
  });

  it('signs with both secrets during a rotation, and a verifier holding either accepts', async () => {
    const older = newSecret();
    const { url, received } = await receiver((_req, res) => res.writeHead(200).end('ok'));
    await attemptDelivery({ url, id, body, secrets: [secret, older] }, { allowHosts });
    const headers = received[0]!.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(older).verify(received[0]!.body, headers)).toEqual(event);
    expect(new Webhook(secret).verify(received[0]!.body, headers)).toEqual(event);
  });

  it.each([200, 201, 202, 299])('counts %i as success', async (status) => {
    const { url } = await receiver((_req, res) => res.writeHead(status).end('{}'));
    expect(await attemptDelivery(input(url), { allowHosts })).toEqual({ ok: true, status_code: status, error: null });
  });

  it.each([400, 404, 410, 429, 500, 503])('counts %i as failure, http_<status>', async (status) => {
    const { url } = await receiver((_req, res) => res.writeHead(status).end('no'));
    expect(await attemptDelivery(input(url), { allowHosts })).toEqual({
      ok: false,
      status_code: status,
      error: `http_${status}`,
    });
  });

  it.each([301, 302, 303, 307, 308])('counts %i as failure and never requests its Location', async (status) => {
    const target = await receiver((_req, res) => res.writeHead(200).end());
    const { url, received } = await receiver((_req, res) => res.writeHead(status, { location: target.url }).end());
    const outcome = await attemptDelivery(input(url), { allowHosts });
    expect(outcome).toEqual({ ok: false, status_code: status, error: `http_${status}` });
    expect(received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  it('ends with timeout when the receiver never answers (a short limit injected here)', async () => {
    const { url, received } = await receiver(() => {
      /* never answers */
    });
    const outcome = await attemptDelivery(input(url), { allowHosts, timeoutMs: 300 });
    expect(outcome).toMatchObject({ ok: false, status_code: null, error: 'timeout' });
    expect(received).toHaveLength(1);
  });

  it('ends with timeout when the resolver never answers: the limit covers the look-up too', async () => {
    const stuck: Resolver = () => new Promise(() => {});
    const outcome = await attemptDelivery(input('https://hooks.example.com/x'), { allowHosts, resolve: stuck, timeoutMs: 200 });
    expect(outcome).toMatchObject({ ok: false, status_code: null, error: 'timeout' });
  });

  it('reads a big answer only up to the bound, then closes', async () => {
    const { url } = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(16 * 1024);
      // Far more than the bound, and never ended: the attempt stops reading at the bound.
      for (let i = 0; i < 32; i++) res.write(chunk);
    });
    const outcome = await attemptDelivery(input(url), { allowHosts, maxResponseBytes: 64 * 1024, timeoutMs: 60_000 });
    expect(outcome).toEqual({ ok: true, status_code: 200, error: null });
  });

  it('fails with connection_error when nothing listens, and names only the code in the detail', async () => {
    const { port } = await receiver((_req, res) => res.end());
    const closed = servers.pop()!;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await attemptDelivery(input(`http://127.0.0.1:${port}/`), { allowHosts });
    expect(outcome).toEqual({ ok: false, status_code: null, error: 'connection_error', detail: 'ECONNREFUSED' });
  });

  it.each([['127.0.0.1'], ['10.0.0.5'], ['169.254.169.254'], ['::1'], ['::ffff:127.0.0.1'], ['fd00:ec2::254']])(
    'never connects to a name that resolves to %s: forbidden_address, the address only in the detail',
    async (address) => {
      const { port, received } = await receiver((_req, res) => res.writeHead(200).end());
      const resolve: Resolver = async () => [{ address, family: address.includes(':') ? 6 : 4 }];
      const outcome = await attemptDelivery(input(`https://internal.example.com:${port}/`), { allowHosts, resolve });
      expect(outcome).toMatchObject({ ok: false, status_code: null, error: 'forbidden_address' });
      expect(outcome.error).not.toContain(address);
      expect(outcome.detail).toContain(address);
      expect(received).toHaveLength(0);
    },
  );

  it('refuses an IP literal outside the allow list, and http to a host not allowed', async () => {
    const { port, received } = await receiver((_req, res) => res.writeHead(200).end());
    const only = parseAllowHosts('localhost');
    expect(await attemptDelivery(input(`http://127.0.0.1:${port}/`), { allowHosts: only })).toMatchObject({
      ok: false,
      error: 'invalid_url',
    });
    expect(await attemptDelivery(input(`https://127.0.0.1:${port}/`), { allowHosts: only })).toMatchObject({
      ok: false,
      error: 'forbidden_address',
    });
    expect(received).toHaveLength(0);
  });

  it('fails with dns_error when the name does not resolve', async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    };
    expect(await attemptDelivery(input('https://nowhere.example.com/'), { allowHosts, resolve })).toMatchObject({
      ok: false,
      error: 'dns_error',
    });
  });

  it('never puts the secret in the outcome', async () => {
    const { url } = await receiver((_req, res) => res.writeHead(500).end(secret));
    const outcome = await attemptDelivery(input(url), { allowHosts });
    expect(JSON.stringify(outcome)).not.toContain(secret.slice(6));
  });
});
