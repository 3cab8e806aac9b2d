import fc from 'fast-check';
import {
  checkWebhookUrl,
  classifyAddress,
  IPV4_BLOCKS,
  IPV6_BLOCKS,
  MAX_WEBHOOK_URL_LENGTH,
  parseAllowHosts,
} from '../../lib/domain/webhook-address';

/**
 * The URL and address rules of webhooks.md ("Managing webhooks", "Deliveries"), with the inputs an
 * attacker tries against an SSRF boundary: other spellings of 127.0.0.1, IPv4 inside
 * IPv6, the metadata service, private and reserved blocks. No allowed hosts unless a test says so
 * (AWS sets none).
 */
const none: ReadonlySet<string> = new Set();
const check = (url: unknown, allow = none) => checkWebhookUrl(url, allow);

describe('a webhook URL: what is accepted', () => {
  it.each([
    ['https://hooks.example.com/board?x=1', 'https://hooks.example.com/board?x=1', 'hooks.example.com'],
    ['HTTPS://Hooks.Example.COM:443/a', 'https://hooks.example.com/a', 'hooks.example.com'],
    ['https://hooks.example.com:8443/a', 'https://hooks.example.com:8443/a', 'hooks.example.com'],
    ['https://bücher.example/x', 'https://xn--bcher-kva.example/x', 'xn--bcher-kva.example'],
    ['https://8.8.8.8/hook', 'https://8.8.8.8/hook', '8.8.8.8'],
    ['https://[2606:4700:4700::1111]/hook', 'https://[2606:4700:4700::1111]/hook', '[2606:4700:4700::1111]'],
  ])('%s is stored as %s', (input, url, host) => {
    expect(check(input)).toMatchObject({ ok: true, url, host, protocol: 'https:', allowListed: false });
  });

  it('takes a host name as it is (its addresses are judged at every attempt) and an IP literal with its address', () => {
    expect(check('https://hooks.example.com/')).toMatchObject({ ok: true, literal: null });
    expect(check('https://0x08080808/')).toMatchObject({
      ok: true,
      url: 'https://8.8.8.8/',
      literal: { address: '8.8.8.8', family: 4 },
    });
    expect(check('https://[2606:4700:4700:0::1111]/')).toMatchObject({
      ok: true,
      literal: { address: '2606:4700:4700::1111', family: 6 },
    });
  });

  it('takes exactly 2,048 characters and refuses 2,049, also when normalising lengthens it', () => {
    const base = 'https://hooks.example.com/';
    const at = (n: number) => base + 'a'.repeat(n - base.length);
    expect(check(at(MAX_WEBHOOK_URL_LENGTH))).toMatchObject({ ok: true });
    expect(check(at(MAX_WEBHOOK_URL_LENGTH + 1))).toMatchObject({ ok: false, reason: 'too_long' });
    // 2,044 characters as sent, 2,050 once the host is punycode (ü is xn--tda): what is stored is held to the limit too.
    const idn = 'https://ü.example/';
    const long = idn + 'a'.repeat(MAX_WEBHOOK_URL_LENGTH - 4 - idn.length);
    expect(long.length).toBe(MAX_WEBHOOK_URL_LENGTH - 4);
    expect(new URL(long).href.length).toBe(MAX_WEBHOOK_URL_LENGTH + 2);
    expect(check(long)).toMatchObject({ ok: false, reason: 'too_long' });
  });
});

describe('a webhook URL: what is refused before any look-up (a 400 on create and change)', () => {
  it.each([
    [''],
    ['hooks.example.com'],
    ['/relative/path'],
    ['https://'],
    ['https://a b/'],
    ['https://1.2.3.4.5/'],
    ['https://[::1'],
  ])('%j is malformed', (input) => {
    expect(check(input)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it.each([[null], [42], [{ href: 'https://example.com/' }]])('%j is not a string', (input) => {
    expect(check(input)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it.each([
    ['http://hooks.example.com/'],
    ['ftp://hooks.example.com/'],
    ['file:///etc/passwd'],
    ['gopher://127.0.0.1:6379/_SET'],
    ['javascript:alert(1)'],
    ['data:text/plain,hi'],
    ['ws://hooks.example.com/'],
    ['wss://hooks.example.com/'],
  ])('%s: only https', (input) => {
    expect(check(input)).toMatchObject({ ok: false, reason: 'scheme', detail: 'must be an https URL' });
  });

  it.each([
    ['https://user:pass@hooks.example.com/in'],
    ['https://deploy-bot@hooks.example.com/in'],
    ['https://:s3cret@hooks.example.com/in'],
    ['https://hooks.example.com@evil.example/in'],
    ['https://user%40corp:p%3Ass@hooks.example.com/in'],
    ['HTTPS://USER:PASS@HOOKS.EXAMPLE.COM/in'],
  ])('%s: no user name or password before the host', (input) => {
    expect(check(input)).toMatchObject({ ok: false, reason: 'credentials', detail: 'must not carry a user name or password' });
  });

  it('an @ after the host (path, query, fragment) is no credential, and an empty userinfo is dropped by the parser', () => {
    expect(check('https://hooks.example.com/in@board?by=a@b#c@d')).toMatchObject({ ok: true, host: 'hooks.example.com' });
    expect(check('https://@hooks.example.com/in')).toMatchObject({ ok: true, url: 'https://hooks.example.com/in' });
  });

  it('credentials are refused on an allowed host too', () => {
    expect(checkWebhookUrl('http://admin:admin@localhost:9/in', new Set(['localhost']))).toMatchObject({
      ok: false,
      reason: 'credentials',
    });
  });

  // The tricks against an SSRF boundary and the blocks of webhooks.md, each as a URL host.
  it.each([
    ['https://127.0.0.1/', 'loopback'],
    ['https://2130706433/', 'decimal 127.0.0.1'],
    ['https://0177.0.0.1/', 'octal 127.0.0.1'],
    ['https://0x7f.1/', 'hex, short 127.0.0.1'],
    ['https://0x7f000001/', 'hex 127.0.0.1'],
    ['https://017700000001/', 'octal 127.0.0.1 in one part'],
    ['https://127.1/', 'short 127.0.0.1'],
    ['https://127.0.1/', 'three-part 127.0.0.1'],
    ['https://１２７.０.０.１/', 'full-width digits'],
    ['https://127.0.0.1.:8443/', 'trailing dot'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://0/', '0 (is 0.0.0.0)'],
    ['https://[::]/', 'IPv6 unspecified'],
    ['https://[::1]/', 'IPv6 loopback'],
    ['https://[0:0:0:0:0:0:0:1]/', 'IPv6 loopback in full'],
    ['https://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'],
    ['https://[::ffff:7f00:1]/', 'IPv4-mapped loopback in hex'],
    ['https://[0:0:0:0:0:ffff:127.0.0.1]/', 'IPv4-mapped loopback in full'],
    ['https://[::127.0.0.1]/', 'IPv4-compatible loopback'],
    ['https://[::ffff:8.8.8.8]/', 'IPv4-mapped, even of a public address'],
    ['https://[64:ff9b::127.0.0.1]/', 'NAT64 of loopback'],
    ['https://[64:ff9b::a9fe:a9fe]/', 'NAT64 of the metadata service'],
    ['https://[64:ff9b:1::808:808]/', 'local-use NAT64'],
    ['https://[2002:7f00:1::1]/', '6to4 of loopback'],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'Teredo'],
    ['https://169.254.169.254/latest/meta-data/', 'instance metadata (IPv4)'],
    ['https://[fd00:ec2::254]/latest/meta-data/', 'instance metadata (IPv6)'],
    ['https://[FD00:EC2::254]/', 'instance metadata (IPv6, upper case)'],
    ['https://[::ffff:169.254.169.254]/', 'IPv4-mapped metadata'],
    ['https://169.254.0.1/', 'link-local'],
    ['https://[fe80::1]/', 'IPv6 link-local'],
    ['https://[fc00::1]/', 'unique-local'],
    ['https://[fdff:ffff::1]/', 'unique-local'],
    ['https://[fec0::1]/', 'site-local'],
    ['https://10.0.0.1/', 'private'],
    ['https://10.255.255.255/', 'private'],
    ['https://172.16.0.1/', 'private'],
    ['https://172.31.255.255/', 'private'],
    ['https://192.168.1.1/', 'private'],
    ['https://100.64.0.1/', 'carrier-grade NAT'],
    ['https://100.127.255.255/', 'carrier-grade NAT'],
    ['https://192.0.0.170/', 'IETF protocol assignments'],
    ['https://192.0.2.1/', 'documentation'],
    ['https://198.51.100.7/', 'documentation'],
    ['https://203.0.113.9/', 'documentation'],
    ['https://[2001:db8::1]/', 'IPv6 documentation'],
    ['https://[3fff::1]/', 'IPv6 documentation'],
    ['https://198.18.0.1/', 'benchmarking'],
    ['https://198.19.255.255/', 'benchmarking'],
    ['https://192.88.99.1/', '6to4 relay'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://239.255.255.250/', 'multicast'],
    ['https://[ff02::1]/', 'IPv6 multicast'],
    ['https://240.0.0.1/', 'reserved'],
    ['https://255.255.255.255/', 'broadcast'],
    ['https://[100::1]/', 'discard-only'],
    ['https://[5f00::1]/', 'segment routing'],
    ['https://[4000::1]/', 'outside global unicast'],
    ['https://user:pass@127.0.0.1/', 'credentials before a private host'],
    ['https://hooks.example.com@127.0.0.1/', 'a name as the user part'],
    ['https://hooks.example.com:443@10.0.0.1:443/', 'a name and port as the user part'],
  ])('%s (%s) is forbidden_address, naming no address', (input) => {
    const result = check(input);
    expect(result).toEqual({
      ok: false,
      reason: 'forbidden_address',
      detail: 'must not point to a private or otherwise non-public address',
    });
  });

  it.each([
    ['https://126.255.255.255/'],
    ['https://128.0.0.0/'],
    ['https://9.255.255.255/'],
    ['https://11.0.0.0/'],
    ['https://172.15.255.255/'],
    ['https://172.32.0.0/'],
    ['https://100.63.255.255/'],
    ['https://100.128.0.0/'],
    ['https://169.253.255.255/'],
    ['https://169.255.0.0/'],
    ['https://192.0.1.1/'],
    ['https://192.167.255.255/'],
    ['https://192.169.0.0/'],
    ['https://198.17.255.255/'],
    ['https://198.20.0.0/'],
    ['https://223.255.255.255/'],
    ['https://1.1.1.1/'],
    ['https://[64:ff9b::808:808]/'],
    ['https://[2001:200::1]/'],
    ['https://[2a00:1450:4001:80b::200e]/'],
  ])('%s, just outside a block, is public', (input) => {
    expect(check(input)).toMatchObject({ ok: true });
  });
});

describe('every spelling of an IPv4 address gets the dotted form and its verdict', () => {
  const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  // Some addresses from every block, and any address at all.
  const fromBlocks = fc.constantFrom(...IPV4_BLOCKS.map((b) => b.cidr)).chain((cidr) => {
    const [base, bits] = cidr.split('/') as [string, string];
    const start = toNumber(base.split('.').map(Number) as Octets);
    const size = 2 ** (32 - Number(bits));
    return fc.nat(size - 1).map((offset) => fromNumber(start + offset));
  });
  type Octets = [number, number, number, number];
  const toNumber = ([a, b, c, d]: Octets) => ((a * 256 + b) * 256 + c) * 256 + d;
  const fromNumber = (n: number): Octets => [
    Math.floor(n / 2 ** 24) % 256,
    Math.floor(n / 2 ** 16) % 256,
    Math.floor(n / 256) % 256,
    n % 256,
  ];
  const spellings = (o: Octets) => {
    const n = toNumber(o);
    return [
      o.join('.'),
      String(n),
      `0x${n.toString(16)}`,
      `0${n.toString(8)}`,
      o.map((x) => `0${x.toString(8)}`).join('.'),
      o.map((x) => `0x${x.toString(16)}`).join('.'),
      `${o[0]}.${o[1]}.${o[2] * 256 + o[3]}`,
      `${o[0]}.${(o[1] * 256 + o[2]) * 256 + o[3]}`,
      `${o.join('.')}.`,
    ];
  };

  it('the same verdict and stored host for nine spellings, and IPv4 inside IPv6 never passes', () => {
    fc.assert(
      fc.property(fc.oneof(octets, fromBlocks), (o) => {
        const dotted = o.join('.');
        const verdict = classifyAddress(dotted);
        for (const spelling of spellings(o)) {
          const result = check(`https://${spelling}/`);
          expect({ spelling, ok: result.ok }).toEqual({ spelling, ok: verdict.public });
          if (result.ok) expect(result.url).toBe(`https://${dotted}/`);
        }
        expect(check(`https://[::ffff:${dotted}]/`)).toMatchObject({ ok: false, reason: 'forbidden_address' });
        expect(check(`https://[::${dotted}]/`)).toMatchObject({ ok: false, reason: 'forbidden_address' });
        // NAT64 reaches the address it carries: judged as that address.
        expect(check(`https://[64:ff9b::${dotted}]/`).ok).toBe(verdict.public);
      }),
      { numRuns: 300 },
    );
  });

  it('every address of every listed block is refused (first, last and random ones)', () => {
    for (const { cidr } of IPV4_BLOCKS) {
      const [base, bits] = cidr.split('/') as [string, string];
      const start = toNumber(base.split('.').map(Number) as Octets);
      const last = start + 2 ** (32 - Number(bits)) - 1;
      for (const n of [start, last])
        expect({ cidr, verdict: classifyAddress(fromNumber(n).join('.')).public }).toEqual({ cidr, verdict: false });
    }
    fc.assert(
      fc.property(fromBlocks, (o) => {
        expect(classifyAddress(o.join('.')).public).toBe(false);
      }),
    );
  });
});

describe('every IPv6 address', () => {
  it('is public only inside 2000::/3 or as NAT64 of a public IPv4 address, and gets the same verdict in a URL', () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const verdict = classifyAddress(address);
        const host = new URL(`https://[${address}]/`).hostname.slice(1, -1);
        if (verdict.public)
          expect({ address, host }).toEqual({ address, host: expect.stringMatching(/^([23][0-9a-f]{0,3}:|64:ff9b::)/) });
        expect({ address, ok: check(`https://[${address}]/`).ok }).toEqual({ address, ok: verdict.public });
      }),
      { numRuns: 1000 },
    );
  });
});

describe('classifyAddress: an answer from a resolver', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['0.0.0.0', 'this network (0.0.0.0 included)'],
    ['169.254.169.254', 'link-local (169.254.169.254, the instance metadata service, included)'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:7f00:1', 'IPv4-mapped'],
    ['::7f00:1', 'IPv4-compatible (deprecated)'],
    ['FD00:EC2::254', 'unique-local (fd00:ec2::254, the instance metadata service, included)'],
    ['64:ff9b::10.1.2.3', 'NAT64 of private use'],
    ['fe80::1%eth0', 'scoped (zone index)'],
    ['4000::1', 'outside global unicast (2000::/3)'],
    ['localhost', 'not an IP address'],
    ['010.0.0.1', 'not an IP address'],
    ['2130706433', 'not an IP address'],
    ['', 'not an IP address'],
  ])('%s: not public (%s)', (address, range) => {
    expect(classifyAddress(address)).toMatchObject({ public: false, range });
  });

  it.each([
    ['8.8.8.8', 4],
    ['2606:4700:4700::1111', 6],
    ['64:ff9b::8.8.8.8', 6],
  ])('%s: public', (address, family) => {
    expect(classifyAddress(address)).toEqual({ public: true, family });
  });

  it('every listed block is one addSubnet accepts (a typo would throw at load, not pass silently)', () => {
    for (const { cidr, source } of [...IPV4_BLOCKS, ...IPV6_BLOCKS]) {
      expect(cidr).toMatch(/^[0-9a-f:.]+\/\d+$/);
      expect(source).toMatch(/^RFC \d+/);
      expect(classifyAddress(cidr.split('/')[0]!).public).toBe(false);
    }
  });
});

describe('WEBHOOK_ALLOW_HOSTS', () => {
  it('reads host names and IP literals as the URL parser writes them; unset or empty is none', () => {
    expect(parseAllowHosts(undefined)).toEqual(new Set());
    expect(parseAllowHosts('')).toEqual(new Set());
    expect(parseAllowHosts('127.0.0.1,localhost')).toEqual(new Set(['127.0.0.1', 'localhost']));
    expect(parseAllowHosts(' LocalHost , ::1,[fd00::2], 2130706433,')).toEqual(
      new Set(['localhost', '[::1]', '[fd00::2]', '127.0.0.1']),
    );
  });

  it.each([['localhost:3000'], ['http://localhost'], ['a/b'], ['user@host'], ['a b'], ['[::1'], ['host?x'], ['1.2.3.4.5']])(
    'refuses %j, naming it',
    (entry) => {
      expect(() => parseAllowHosts(`localhost,${entry}`)).toThrow(`WEBHOOK_ALLOW_HOSTS: "${entry}"`);
    },
  );

  const local = parseAllowHosts('127.0.0.1,localhost,::1');

  it('lets an allowed host use http and a non-public address', () => {
    expect(check('http://localhost:3000/hook', local)).toMatchObject({
      ok: true,
      protocol: 'http:',
      allowListed: true,
      literal: null,
    });
    expect(check('http://127.0.0.1:9000/', local)).toMatchObject({
      ok: true,
      allowListed: true,
      literal: { address: '127.0.0.1', family: 4 },
    });
    expect(check('https://[::1]:8443/', local)).toMatchObject({ ok: true, allowListed: true });
    // The same host in another spelling is the same host.
    expect(check('http://2130706433:9000/', local)).toMatchObject({ ok: true, url: 'http://127.0.0.1:9000/' });
  });

  it('allows that host and no other: not its neighbours, not a name resolving to it', () => {
    expect(check('http://127.0.0.2/', local)).toMatchObject({ ok: false, reason: 'scheme' });
    expect(check('https://127.0.0.2/', local)).toMatchObject({ ok: false, reason: 'forbidden_address' });
    expect(check('https://[::ffff:127.0.0.1]/', local)).toMatchObject({ ok: false, reason: 'forbidden_address' });
    expect(check('http://localhost.example.com/', local)).toMatchObject({ ok: false, reason: 'scheme' });
    // A trailing dot is another name to the URL parser: not allowed (its addresses are then judged).
    expect(check('http://localhost./', local)).toMatchObject({ ok: false, reason: 'scheme' });
    expect(check('https://localhost./', local)).toMatchObject({ ok: true, allowListed: false });
    expect(check('ftp://localhost/', local)).toMatchObject({ ok: false, reason: 'scheme' });
  });
});
