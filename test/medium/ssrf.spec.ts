import * as ipaddr from 'ipaddr.js';
import { AddressPolicy } from '../../src/fetch/address-policy';
import { Fetcher } from '../../src/fetch/fetcher';
import { tableResolver } from '../support/app';
import { Fixture, redirect, send } from '../support/fixture';

/**
 * Offline SSRF table: every vector is aimed at a fixture listening on 127.0.0.1, so one that got
 * through would show up as a hit. Nothing here leaves the machine: blocked addresses are refused
 * before any connection is made.
 */
describe('SSRF guard', () => {
  let fx: Fixture;
  let P: number;

  // Internal addresses in every spelling; the WHATWG parser or the resolver hands them to the guard.
  const literalHosts = () => [
    '127.0.0.1',
    '127.1',
    '127.0.1',
    '2130706433',
    '0x7f000001',
    '0x7f.0x0.0x0.0x1',
    '0177.0.0.1',
    '0177.0000.0000.0001',
    '017700000001',
    '127.000.000.001',
    '0x7f.1',
    '127.255.255.254',
    '0.0.0.0',
    '0',
    '0x0',
    '10.0.0.1',
    '10.255.255.255',
    '012.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '192.168.1.254',
    '169.254.169.254',
    '0xa9fea9fe',
    '2852039166',
    '100.64.0.1',
    '100.127.255.254',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '192.0.0.1',
    '192.0.2.1',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::ffff:10.0.0.1]',
    '[::ffff:169.254.169.254]',
    '[64:ff9b::7f00:1]',
    '[64:ff9b::a00:1]',
    '[64:ff9b:1::7f00:1]',
    '[64:ff9b:1:ffff::1]',
    '[2002:7f00:1::]',
    '[2002:a9fe:a9fe::1]',
    '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
    '[::127.0.0.1]',
    '[fe80::1]',
    '[fc00::1]',
    '[fd12:3456::1]',
    '[ff02::1]',
    '[fec0::1]',
    '[100::1]',
    '[2001:db8::1]',
  ];
  const resolvedTo: Record<string, string[]> = {
    'loop.test': ['127.0.0.1'],
    'ten.test': ['10.0.0.5'],
    'meta.test': ['169.254.169.254'],
    'v6loop.test': ['::1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'nat64.test': ['64:ff9b::7f00:1'],
    'nat64local.test': ['64:ff9b:1::a00:1'],
    'sixtofour.test': ['2002:7f00:1::1'],
    'teredo.test': ['2001:0:4136:e378:8000:63bf:80ff:fffe'],
    'ula.test': ['fd00::1'],
    'linklocal.test': ['fe80::1'],
    'cgnat.test': ['100.64.1.1'],
    'zero.test': ['0.0.0.0'],
    'mixed.test': ['8.8.8.8', '127.0.0.1'],
    'mixed6.test': ['2606:4700::1111', '::1'],
    'private172.test': ['172.20.1.1'],
    'multicast.test': ['224.0.0.251'],
    'broadcast.test': ['255.255.255.255'],
    localhost: ['127.0.0.1', '::1'],
  };

  beforeAll(async () => {
    fx = await new Fixture({
      '/': send(200, 'text/plain', 'internal secret'),
      '/hop/*': (req, res) => redirect(decodeURIComponent(req.url!.slice('/hop/'.length)))(req, res),
    }).start();
    P = fx.port;
  });
  afterAll(() => fx.stop());

  function fetcherFor(resolver = tableResolver(resolvedTo), allow: string[] = []) {
    return new Fetcher({ policy: new AddressPolicy(allow.map((c) => ipaddr.parseCIDR(c))), resolver });
  }

  it('has at least 60 vectors and none gets through for a restricted caller', async () => {
    const f = fetcherFor();
    const vectors = [
      ...literalHosts().map((h) => `http://${h}:${P}/`),
      ...Object.keys(resolvedTo).map((h) => `http://${h}:${P}/`),
      ...Object.keys(resolvedTo).map((h) => `http://${h.toUpperCase()}.:${P}/`),
    ];
    expect(vectors.length).toBeGreaterThanOrEqual(60);
    const outcomes: string[] = [];
    for (const url of vectors) {
      const code = await f.fetch(url, { callerClass: 'restricted', timeoutMs: 2000 }).then(
        () => 'FETCHED',
        (e: { code?: string }) => e.code ?? 'error',
      );
      outcomes.push(`${url} ${code}`);
    }
    // A trailing dot on a name (FQDN form) must resolve to the same record and be refused as well,
    // or fail to resolve at all; nothing may be fetched.
    expect(outcomes.filter((o) => o.endsWith('FETCHED'))).toEqual([]);
    expect(outcomes.filter((o) => !/ (blocked_address|dns_error)$/.test(o))).toEqual([]);
    expect(fx.hitCount('/')).toBe(0);
    await f.close();
  });

  it('a redirect from an allowed hop to any internal spelling is refused at the hop', async () => {
    // The first hop is allowed for this fleet caller (127.0.0.1/32); every target is not.
    const f = fetcherFor(tableResolver(resolvedTo), ['127.0.0.1/32']);
    const targets = [
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/',
      'http://0x7f000002/',
      'http://meta.test/',
      'http://ten.test/',
      'http://[::ffff:a9fe:a9fe]/',
      'file:///etc/passwd',
      'gopher://127.0.0.1/',
    ];
    for (const t of targets) {
      const err = await f
        .fetch(`http://127.0.0.1:${P}/hop/${encodeURIComponent(t)}`, {
          callerClass: 'fleet',
          timeoutMs: 2000,
        })
        .then(
          () => undefined,
          (e: { code?: string }) => e.code,
        );
      expect([t, err]).toEqual([t, 'blocked_address']);
    }
    expect(fx.hitCount('/')).toBe(0);
    await f.close();
  });

  it('DNS rebinding: the address that was checked is the one connected to', async () => {
    // First answer allowed (127.0.0.2, where nothing listens), any later answer is the fixture's 127.0.0.1.
    let calls = 0;
    const rebinding = tableResolver({ 'rebind.test': () => (calls++ === 0 ? ['127.0.0.2'] : ['127.0.0.1']) });
    const f = fetcherFor(rebinding, ['127.0.0.2/32']);
    const err = await f.fetch(`http://rebind.test:${P}/`, { callerClass: 'fleet', timeoutMs: 2000 }).then(
      () => 'FETCHED',
      (e: { code?: string }) => e.code,
    );
    expect(err).toBe('connect_error');
    expect(calls).toBe(1);
    expect(fx.hitCount('/')).toBe(0);
    await f.close();
  });

  it('fleet reaches internal addresses only inside SIFT_FLEET_ALLOW, in any spelling', () => {
    const p = new AddressPolicy([ipaddr.parseCIDR('10.0.0.0/8'), ipaddr.parseCIDR('fd00::/8')]);
    expect(p.allowed('10.1.2.3', 'fleet')).toBe(true);
    expect(p.allowed('::ffff:10.1.2.3', 'fleet')).toBe(true);
    expect(p.allowed('fd00::5', 'fleet')).toBe(true);
    expect(p.allowed('192.168.0.1', 'fleet')).toBe(false);
    expect(p.allowed('127.0.0.1', 'fleet')).toBe(false);
    expect(p.allowed('10.1.2.3', 'restricted')).toBe(false);
    expect(p.allowed('93.184.216.34', 'restricted')).toBe(true);
    expect(p.allowed('2606:4700::1111', 'restricted')).toBe(true);
    expect(p.allowed('::ffff:8.8.8.8', 'restricted')).toBe(true);
    expect(p.allowed('not-an-ip', 'fleet')).toBe(false);
    // Local-use NAT64 (RFC 8215) reaches a translator inside the network, whatever it carries.
    expect(p.allowed('64:ff9b:1::808:808', 'restricted')).toBe(false);
    expect(p.allowed('64:ff9b::808:808', 'restricted')).toBe(true);
  });
});
