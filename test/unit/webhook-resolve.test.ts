import { once } from 'node:events';
import { createServer, request } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import { classifyAddress, parseAllowHosts, type ResolvedAddress } from '../../lib/domain/webhook-address';
import { type DeliveryTarget, deliveryTarget, pinnedLookup, type Resolver, systemResolver } from '../../lib/webhooks/resolve';

/**
 * The check at every attempt (webhooks.md, "Deliveries"): the URL's rules again, one look-up of the
 * host, every answer judged, and a connection only to the address judged. The resolver is injected:
 * each test says what DNS answers, including a name that answers public when the webhook is created
 * and private when it is delivered to.
 */
const none: ReadonlySet<string> = new Set();
const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

/** A resolver that answers from a script, one answer per call, and counts its calls. */
function scripted(...answers: (readonly ResolvedAddress[] | Error)[]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length, answers.length) - 1]!;
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return Object.assign(resolve, { calls });
}

const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.com'), { code: 'ENOTFOUND' });

describe('deliveryTarget: a host name and what it resolves to', () => {
  it('connects to the first answer of a name whose answers are all public, and keeps every checked one', async () => {
    const resolve = scripted([v4('93.184.215.14'), v6('2606:2800:21f:cb07:6820:80da:af6b:8b2c')]);
    const target = await deliveryTarget('https://hooks.example.com/in', { allowHosts: none, resolve });
    expect(target).toMatchObject({
      ok: true,
      url: 'https://hooks.example.com/in',
      host: 'hooks.example.com',
      address: '93.184.215.14',
      family: 4,
      addresses: [v4('93.184.215.14'), v6('2606:2800:21f:cb07:6820:80da:af6b:8b2c')],
    });
    expect(resolve.calls).toEqual(['hooks.example.com']);
  });

  it.each([
    [[v4('10.0.0.5')], '10.0.0.5: private use'],
    [[v4('127.0.0.1')], '127.0.0.1: loopback'],
    [[v4('169.254.169.254')], '169.254.169.254: link-local (169.254.169.254, the instance metadata service, included)'],
    [[v4('0.0.0.0')], '0.0.0.0: this network (0.0.0.0 included)'],
    [[v4('100.100.100.200')], '100.100.100.200: shared address space (carrier-grade NAT)'],
    [[v6('::1')], '::1: loopback'],
    [[v6('::ffff:127.0.0.1')], '::ffff:127.0.0.1: IPv4-mapped'],
    [[v6('::ffff:7f00:1')], '::ffff:7f00:1: IPv4-mapped'],
    [[v6('fd00:ec2::254')], 'fd00:ec2::254: unique-local (fd00:ec2::254, the instance metadata service, included)'],
    [[v6('fe80::1%eth0')], 'fe80::1%eth0: scoped (zone index)'],
    [
      [v6('64:ff9b::a9fe:a9fe')],
      '64:ff9b::a9fe:a9fe: NAT64 of link-local (169.254.169.254, the instance metadata service, included)',
    ],
    [[v4('hooks.internal')], 'hooks.internal: not an IP address'],
    // One private answer among public ones refuses the name, whichever comes first.
    [[v4('93.184.215.14'), v4('10.0.0.5')], '10.0.0.5: private use'],
    [[v4('10.0.0.5'), v4('93.184.215.14')], '10.0.0.5: private use'],
    [[v4('93.184.215.14'), v6('::1')], '::1: loopback'],
  ])('a name resolving to %j is forbidden_address (log detail %s)', async (answer, detail) => {
    const target = await deliveryTarget('https://hooks.example.com/', { allowHosts: none, resolve: scripted(answer) });
    expect(target).toEqual({ ok: false, error: 'forbidden_address', detail });
  });

  it('judges every attempt afresh: public when created, private at delivery (DNS rebinding)', async () => {
    const resolve = scripted([v4('93.184.215.14')], [v4('127.0.0.1')], [v4('93.184.215.14')]);
    const first = await deliveryTarget('https://rebind.example.com/', { allowHosts: none, resolve });
    const second = await deliveryTarget('https://rebind.example.com/', { allowHosts: none, resolve });
    const third = await deliveryTarget('https://rebind.example.com/', { allowHosts: none, resolve });
    expect([first.ok, second.ok, third.ok]).toEqual([true, false, true]);
    expect(second).toMatchObject({ error: 'forbidden_address' });
    expect(resolve.calls).toHaveLength(3);
  });

  it('connects through the first answer only: the pinned lookup never asks DNS again, whatever it would say now', async () => {
    const resolve = scripted([v4('93.184.215.14')], [v4('127.0.0.1')]);
    const target = (await deliveryTarget('https://rebind.example.com/', { allowHosts: none, resolve })) as DeliveryTarget;
    const lookup = pinnedLookup(target);
    for (let i = 0; i < 3; i++) {
      const [error, address, family] = await new Promise<unknown[]>((done) =>
        lookup('rebind.example.com', {}, (...args) => done(args)),
      );
      expect({ error, address, family }).toEqual({ error: null, address: '93.184.215.14', family: 4 });
    }
    expect(resolve.calls).toHaveLength(1);
  });

  it('a failed or empty look-up is dns_error, naming the code for the log', async () => {
    expect(await deliveryTarget('https://hooks.example.com/', { allowHosts: none, resolve: scripted(notFound) })).toEqual({
      ok: false,
      error: 'dns_error',
      detail: 'ENOTFOUND',
    });
    expect(await deliveryTarget('https://hooks.example.com/', { allowHosts: none, resolve: scripted([]) })).toEqual({
      ok: false,
      error: 'dns_error',
      detail: 'no address',
    });
  });

  it('looks nothing up for an IP literal, and refuses a private one before any look-up', async () => {
    const resolve = scripted([v4('10.0.0.1')]);
    expect(await deliveryTarget('https://8.8.8.8/in', { allowHosts: none, resolve })).toMatchObject({
      ok: true,
      address: '8.8.8.8',
      addresses: [v4('8.8.8.8')],
    });
    expect(await deliveryTarget('https://[2606:4700:4700::1111]/', { allowHosts: none, resolve })).toMatchObject({
      ok: true,
      address: '2606:4700:4700::1111',
      family: 6,
    });
    for (const url of ['https://2130706433/', 'https://[::ffff:127.0.0.1]/', 'https://169.254.169.254/latest/meta-data/'])
      expect(await deliveryTarget(url, { allowHosts: none, resolve })).toMatchObject({ ok: false, error: 'forbidden_address' });
    expect(resolve.calls).toEqual([]);
  });

  it('refuses a stored URL the rules no longer accept (an http URL once its host is no longer allowed)', async () => {
    const resolve = scripted([v4('127.0.0.1')]);
    const local = parseAllowHosts('localhost');
    expect(await deliveryTarget('http://localhost:3000/', { allowHosts: local, resolve })).toMatchObject({ ok: true });
    expect(await deliveryTarget('http://localhost:3000/', { allowHosts: none, resolve })).toEqual({
      ok: false,
      error: 'invalid_url',
      detail: 'scheme: must be an https URL',
    });
    expect(await deliveryTarget('not a url', { allowHosts: none, resolve })).toMatchObject({ error: 'invalid_url' });
  });
});

describe('deliveryTarget: WEBHOOK_ALLOW_HOSTS', () => {
  const local = parseAllowHosts('127.0.0.1,localhost,::1');

  it('lets an allowed name resolve to loopback, and only that name', async () => {
    const resolve = scripted([v4('127.0.0.1'), v6('::1')]);
    expect(await deliveryTarget('http://localhost:4000/hook', { allowHosts: local, resolve })).toMatchObject({
      ok: true,
      allowListed: true,
      address: '127.0.0.1',
      addresses: [v4('127.0.0.1'), v6('::1')],
    });
    // Another name with the same answers, the same name with a trailing dot: judged, and refused.
    for (const url of ['https://evil.example.com/', 'https://localhost./'])
      expect(await deliveryTarget(url, { allowHosts: local, resolve })).toMatchObject({ ok: false, error: 'forbidden_address' });
  });

  it('lets allowed IP literals through, and refuses an answer that is no address at all even for an allowed name', async () => {
    expect(await deliveryTarget('http://127.0.0.1:9/', { allowHosts: local })).toMatchObject({ ok: true, address: '127.0.0.1' });
    expect(await deliveryTarget('http://[::1]:9/', { allowHosts: local })).toMatchObject({ ok: true, address: '::1', family: 6 });
    expect(await deliveryTarget('http://localhost/', { allowHosts: local, resolve: scripted([v4('localhost')]) })).toMatchObject({
      ok: false,
      error: 'forbidden_address',
    });
  });
});

describe('the system resolver', () => {
  it('resolves localhost (from /etc/hosts) to loopback, which is refused unless allowed', async () => {
    const answers = await systemResolver('localhost');
    expect(answers.length).toBeGreaterThan(0);
    for (const { address, family } of answers)
      expect({ family, verdict: classifyAddress(address) }).toEqual({
        family: isIP(address),
        verdict: { public: false, family, range: 'loopback' },
      });
    expect(await deliveryTarget('https://localhost/', { allowHosts: none })).toMatchObject({
      ok: false,
      error: 'forbidden_address',
    });
    expect(await deliveryTarget('http://localhost/', { allowHosts: parseAllowHosts('localhost') })).toMatchObject({ ok: true });
  });
});

describe('pinnedLookup', () => {
  const target = {
    ok: true,
    url: 'https://hooks.example.com/',
    protocol: 'https:',
    host: 'hooks.example.com',
    allowListed: false,
    literal: null,
    address: '93.184.215.14',
    family: 4,
    addresses: [v4('93.184.215.14'), v6('2606:2800:21f:cb07:6820:80da:af6b:8b2c')],
  } as const satisfies DeliveryTarget;
  const ask = (hostname: string, options: object) =>
    new Promise<unknown[]>((done) => pinnedLookup(target)(hostname, options, (...args) => done(args)));

  it('answers as Node asks: every checked address with all, else the first of the family asked', async () => {
    expect(await ask('hooks.example.com', { all: true })).toEqual([null, target.addresses]);
    expect(await ask('hooks.example.com', {})).toEqual([null, '93.184.215.14', 4]);
    expect(await ask('hooks.example.com', { family: 6 })).toEqual([null, '2606:2800:21f:cb07:6820:80da:af6b:8b2c', 6]);
    expect(await ask('hooks.example.com', { family: 'IPv6', all: true })).toEqual([null, [target.addresses[1]]]);
  });

  it('answers no other name, and no family it did not check', async () => {
    const [error] = await ask('metadata.google.internal', {});
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
    const v4Only = { ...target, addresses: [v4('93.184.215.14')] };
    const [noV6] = await new Promise<unknown[]>((done) =>
      pinnedLookup(v4Only)('hooks.example.com', { family: 6 }, (...a) => done(a)),
    );
    expect(noV6).toMatchObject({ code: 'ENOTFOUND' });
  });

  // One loopback connection: the only way to show that http.request really goes where the lookup says.
  it('makes http.request connect to the checked address while the Host header keeps the name', async () => {
    const server = createServer((req, res) => res.end(JSON.stringify({ host: req.headers.host, url: req.url })));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const allowHosts = parseAllowHosts('hooks.example.test');
      const resolve = scripted([v4('127.0.0.1')], [v4('10.9.9.9')]);
      const checked = await deliveryTarget(`http://hooks.example.test:${port}/in?x=1`, { allowHosts, resolve });
      expect(checked).toMatchObject({ ok: true, address: '127.0.0.1' });
      const body = await new Promise<string>((resolveBody, reject) => {
        const req = request(
          (checked as DeliveryTarget).url,
          { method: 'POST', lookup: pinnedLookup(checked as DeliveryTarget) },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              text += chunk;
            });
            res.on('end', () => resolveBody(text));
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      expect(JSON.parse(body)).toEqual({ host: `hooks.example.test:${port}`, url: '/in?x=1' });
      expect(resolve.calls).toHaveLength(1);
    } finally {
      server.close();
    }
  });
});
