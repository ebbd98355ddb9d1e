import * as http from 'node:http';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import * as ipaddr from 'ipaddr.js';
import { FetchError } from '../../src/common/errors';
import { AddressPolicy } from '../../src/fetch/address-policy';
import { DnsGuard, type Resolver } from '../../src/fetch/dns-guard';
import { MAX_SOCKETS, Session } from '../../src/render/proxy-session';
import {
  RenderProxy,
  type ProxyGate,
  type ProxyLimits,
  type ProxySession,
} from '../../src/render/render-proxy';
import { waitUntil } from '../support/wait';

/**
 * The render proxy over real sockets: the page's server on 127.0.0.2 and a "secret" server on
 * 127.0.0.3 on the same port, so only the address the proxy connects to decides which one a
 * request reaches. Gates allow 127.0.0.2 only, as a fleet caller's policy with
 * SIFT_FLEET_ALLOW=127.0.0.2/32 does; names come from a table, never from the system resolver.
 */
const PAGE = '127.0.0.2';
const SECRET = '127.0.0.3';

class Site {
  connections = 0;
  readonly seen: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  readonly open = new Set<net.Socket>();
  private readonly server: http.Server;

  constructor(private readonly name: string) {
    this.server = http.createServer((req, res) => {
      this.seen.push({ url: req.url ?? '', headers: req.headers });
      if (req.url?.startsWith('/big?n=')) {
        const n = Number(req.url.slice(7));
        return void res.writeHead(200, { 'content-length': String(n) }).end('x'.repeat(n));
      }
      if (req.url === '/reset') return void res.writeHead(200, { 'content-length': '1000' }).write('half');
      res.writeHead(200, { 'content-type': 'application/json', 'x-hop': 'kept', 'keep-alive': 'timeout=9' });
      res.end(JSON.stringify({ site: this.name, host: req.headers.host, url: req.url }));
    });
    this.server.on('request', (req: http.IncomingMessage) => {
      if (req.url === '/reset') setTimeout(() => req.socket.destroy(), 50);
    });
    this.server.on('connection', (s: net.Socket) => {
      this.connections++;
      this.open.add(s);
      s.once('close', () => this.open.delete(s));
    });
    // A WebSocket stand-in: the handshake answer, then every byte echoed back.
    this.server.on('upgrade', (req: http.IncomingMessage, s: net.Socket) => {
      this.seen.push({ url: req.url ?? '', headers: req.headers });
      s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      s.on('data', (d) => s.write(d));
    });
  }

  listen(ip: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, ip, () => resolve((this.server.address() as net.AddressInfo).port));
    });
  }

  async stop(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/** A gate as the render side builds it: the DNS guard's answer, every address checked by the policy. */
function policyGate(table: Record<string, string[] | (() => string[])>): ProxyGate & { asked: string[] } {
  const resolver: Resolver = async (host) => {
    const entry = table[host];
    const addrs = typeof entry === 'function' ? entry() : entry;
    if (!addrs) throw new FetchError('dns_error', `${host} did not resolve`);
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  // No reuse of answers: each connection's lookup is a new one, as a rebinding name wants.
  const guard = new DnsGuard(resolver, { timeoutMs: 2000, perCaller: 4, reuseMs: 0 });
  const policy = new AddressPolicy([ipaddr.parseCIDR(`${PAGE}/32`)]);
  const asked: string[] = [];
  return {
    asked,
    async address(host) {
      asked.push(host);
      const ips = (await guard.resolve(host, 'caller')).map((a) => a.address);
      policy.check(host, ips, 'fleet');
      return ips[0];
    },
  };
}

const TABLE = {
  'page.test': [PAGE],
  localhost: [PAGE], // the system would say 127.0.0.1: the proxy must not ask it
  'secret.test': [SECRET],
  [PAGE]: [PAGE],
  [SECRET]: [SECRET],
  '169.254.169.254': ['169.254.169.254'],
};
const LIMITS: ProxyLimits = { maxRequests: 500, maxBytes: 10 * 1024 * 1024, maxHosts: 50 };

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const authOf = (s: ProxySession) => basic(s.username, s.password);

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An absolute-form request to the proxy. */
function viaProxy(proxy: RenderProxy, url: string, auth?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port: proxy.port,
      path: url,
      agent: false,
      headers: auth ? { 'proxy-authorization': auth } : {},
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw socket to the proxy: what it is sent is written as is. */
async function raw(proxy: RenderProxy): Promise<net.Socket> {
  const s = net.connect(proxy.port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  return s;
}

/** Reads up to the end of a response head; resolves with the head and the bytes after it. */
function readHead(s: net.Socket): Promise<{ head: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => reject(new Error(`no answer head: ${buf.toString()}`)), 5000);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      s.off('data', onData);
      resolve({ head: buf.subarray(0, end).toString(), rest: buf.subarray(end + 4) });
    };
    s.on('data', onData);
    s.once('close', () => {
      clearTimeout(timer);
      reject(new Error(`closed before an answer head: ${buf.toString()}`));
    });
  });
}

/** Everything the socket sends until it closes (at most 5 s). */
function readAll(s: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(out), 5000);
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.once('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

const closed = (s: net.Socket) =>
  s.destroyed ? Promise.resolve() : new Promise<void>((r) => s.once('close', () => r()));

const statusOf = (head: string) => Number(head.split(' ')[1]);

/** A CONNECT; the socket stays open after a 200 for the tunnel. */
async function connect(
  proxy: RenderProxy,
  authority: string,
  auth?: string,
): Promise<{ s: net.Socket; status: number; head: string }> {
  const s = await raw(proxy);
  s.on('error', () => undefined); // a refused tunnel is closed by the proxy
  const authLine = auth ? `Proxy-Authorization: ${auth}\r\n` : '';
  s.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${authLine}\r\n`);
  const { head } = await readHead(s);
  return { s, status: statusOf(head), head };
}

describe('render proxy', () => {
  let page: Site;
  let secret: Site;
  let P: number;
  let proxy: RenderProxy;
  const sessions: ProxySession[] = [];

  const session = (
    gate: ProxyGate = policyGate(TABLE),
    limits = LIMITS,
    signal = new AbortController().signal,
  ) => {
    const s = proxy.session(gate, limits, signal);
    sessions.push(s);
    return s;
  };

  beforeAll(async () => {
    secret = new Site('secret');
    P = await secret.listen(SECRET, 0);
    page = new Site('page');
    await page.listen(PAGE, P);
    proxy = await RenderProxy.start();
  });

  afterEach(() => {
    for (const s of sessions.splice(0)) s.close();
    // Nothing a test did may ever reach the secret server.
    expect(secret.connections).toBe(0);
  });

  afterAll(async () => {
    await proxy.close();
    await page.stop();
    await secret.stop();
  });

  describe('reaches the address the gate returned, never one of its own', () => {
    it('forwards an absolute-form GET with the URL’s Host, without the proxy’s headers', async () => {
      const s = session();
      const before = page.connections;
      const a = await viaProxy(proxy, `http://localhost:${P}/who?x=1`, authOf(s));
      expect(a.status).toBe(200);
      // localhost: the system resolver would say 127.0.0.1; the gate said 127.0.0.2, and it is there it went.
      expect(JSON.parse(a.body)).toEqual({ site: 'page', host: `localhost:${P}`, url: '/who?x=1' });
      expect(a.headers['x-hop']).toBe('kept');
      expect(a.headers['keep-alive']).toBeUndefined();
      const seen = page.seen.at(-1)!.headers;
      expect(seen['proxy-authorization']).toBeUndefined();
      expect(page.connections).toBe(before + 1);
      expect(s.counts).toMatchObject({ requests: 1, blocked: 0, hosts: 1 });
      expect(s.counts.bytes).toBeGreaterThan(a.body.length);
    });

    it('tunnels a CONNECT to the checked address and counts the bytes that came down', async () => {
      const s = session();
      const { s: tunnel, status } = await connect(proxy, `page.test:${P}`, authOf(s));
      expect(status).toBe(200);
      tunnel.write(`GET /in-tunnel HTTP/1.1\r\nHost: page.test:${P}\r\nConnection: close\r\n\r\n`);
      const got = await readAll(tunnel);
      expect(got).toMatch(/^HTTP\/1\.1 200/);
      expect(got).toContain('"site":"page"');
      expect(page.seen.at(-1)!.url).toBe('/in-tunnel');
      expect(s.counts).toEqual({
        requests: 1,
        blocked: 0,
        bytes: Buffer.byteLength(got),
        hosts: 1,
        proxyFailed: 0,
      });
    });

    it('refuses blocked hosts with 403 and counts them, connecting nowhere', async () => {
      const gate = policyGate(TABLE);
      const s = session(gate);
      const before = page.connections;
      for (const authority of [
        `secret.test:${P}`,
        `${SECRET}:${P}`,
        '169.254.169.254:80',
        `nowhere.test:${P}`,
      ]) {
        const { head, s: sock } = await connect(proxy, authority, authOf(s));
        expect(statusOf(head)).toBe(403);
        await closed(sock);
      }
      const plain = await viaProxy(proxy, `http://secret.test:${P}/`, authOf(s));
      expect(plain.status).toBe(403);
      expect(plain.headers['x-sift-refused']).toBe('blocked_address');
      const { head } = await connect(proxy, `nowhere.test:${P}`, authOf(s));
      expect(head).toContain('X-Sift-Refused: dns_error');
      expect(s.counts).toMatchObject({ requests: 6, blocked: 6 });
      expect(page.connections).toBe(before);
      expect(gate.asked).toEqual([
        'secret.test',
        SECRET,
        '169.254.169.254',
        'nowhere.test',
        'secret.test',
        'nowhere.test',
      ]);
    });

    it('asks the gate for every connection: a name that rebinds to the secret server is refused', async () => {
      let lookups = 0;
      const gate = policyGate({ 'rebind.test': () => (++lookups === 1 ? [PAGE] : [SECRET]) });
      const s = session(gate);
      const first = await viaProxy(proxy, `http://rebind.test:${P}/a`, authOf(s));
      expect(JSON.parse(first.body).site).toBe('page');
      const second = await viaProxy(proxy, `http://rebind.test:${P}/b`, authOf(s));
      expect(second.status).toBe(403);
      const tunnel = await connect(proxy, `rebind.test:${P}`, authOf(s));
      expect(tunnel.status).toBe(403);
      expect(lookups).toBe(3);
      expect(s.counts).toMatchObject({ requests: 3, blocked: 2, hosts: 1 });
    });

    it('connects where the gate said even when the name would resolve elsewhere', async () => {
      // A gate that names a different address each time: each connection follows its own answer.
      const answers = [PAGE, '127.0.0.4'];
      const s = session({ address: async () => answers.shift()! });
      const a = await viaProxy(proxy, `http://secret.test:${P}/`, authOf(s));
      expect(JSON.parse(a.body).site).toBe('page');
      const b = await viaProxy(proxy, `http://secret.test:${P}/`, authOf(s));
      expect(b.status).toBe(502); // 127.0.0.4: nobody listens there, and nothing else was tried
    });

    it('refuses a gate answer that is not an address rather than resolve it', async () => {
      const s = session({ address: async () => 'localhost' });
      const a = await viaProxy(proxy, `http://page.test:${P}/`, authOf(s));
      expect(a.status).toBe(403);
      expect(a.headers['x-sift-refused']).toBe('gate_not_an_address');
      expect(s.counts.blocked).toBe(1);
    });
  });

  describe('WebSockets', () => {
    const upgrade = (url: string, host: string, auth: string) =>
      `GET ${url} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nProxy-Authorization: ${auth}\r\n\r\n`;

    const echoes = async (sock: net.Socket) => {
      sock.write('ping-1');
      const got = await new Promise<string>((r) => sock.once('data', (d: Buffer) => r(d.toString())));
      expect(got).toBe('ping-1');
    };

    it('passes an Upgrade of a plain request to the checked address, then bytes both ways', async () => {
      const s = session();
      const sock = await raw(proxy);
      sock.write(upgrade(`http://page.test:${P}/ws`, `page.test:${P}`, authOf(s)));
      const { head } = await readHead(sock);
      expect(statusOf(head)).toBe(101);
      await echoes(sock);
      const seen = page.seen.at(-1)!;
      expect(seen.url).toBe('/ws');
      expect(seen.headers.host).toBe(`page.test:${P}`);
      expect(seen.headers.upgrade).toBe('websocket');
      expect(seen.headers['proxy-authorization']).toBeUndefined();
      sock.destroy();
    });

    it('refuses an Upgrade to a blocked host', async () => {
      const s = session();
      const sock = await raw(proxy);
      sock.write(upgrade(`http://secret.test:${P}/ws`, `secret.test:${P}`, authOf(s)));
      expect(statusOf((await readHead(sock).catch(() => ({ head: 'x 0' }))).head)).toBe(403);
      expect(s.counts).toMatchObject({ requests: 1, blocked: 1 });
    });

    it('carries a WebSocket through a CONNECT tunnel', async () => {
      const s = session();
      const { s: tunnel, status } = await connect(proxy, `page.test:${P}`, authOf(s));
      expect(status).toBe(200);
      tunnel.write(upgrade('/ws-tunnel', `page.test:${P}`, 'none'));
      expect(statusOf((await readHead(tunnel)).head)).toBe(101);
      await echoes(tunnel);
      expect(page.seen.at(-1)!.url).toBe('/ws-tunnel');
      tunnel.destroy();
    });
  });

  describe('credentials', () => {
    it('answers 407 with a Basic challenge without credentials, with wrong ones, and after close', async () => {
      const s = session();
      const before = page.connections;
      const wrong = [
        undefined,
        basic(s.username, 'x'.repeat(s.password.length)),
        basic(s.username, `${s.password}x`),
        basic('someone', s.password),
        `Bearer ${s.password}`,
      ];
      for (const auth of wrong) {
        const c = await connect(proxy, `page.test:${P}`, auth);
        expect(c.status).toBe(407);
        expect(c.head).toContain('Proxy-Authenticate: Basic realm="sift"');
        const g = await viaProxy(proxy, `http://page.test:${P}/`, auth);
        expect(g.status).toBe(407);
        expect(g.headers['proxy-authenticate']).toBe('Basic realm="sift"');
      }
      expect(s.password).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
      expect((await viaProxy(proxy, `http://page.test:${P}/`, authOf(s))).status).toBe(200);
      s.close();
      expect((await viaProxy(proxy, `http://page.test:${P}/`, authOf(s))).status).toBe(407);
      expect((await connect(proxy, `page.test:${P}`, authOf(s))).status).toBe(407);
      expect(page.connections).toBe(before + 1);
      expect(s.counts.requests).toBe(1);
    });

    it('keeps sessions apart: one render’s credentials are not another’s', async () => {
      const a = session();
      const b = session();
      expect(a.username).not.toBe(b.username);
      expect((await viaProxy(proxy, `http://page.test:${P}/`, basic(a.username, b.password))).status).toBe(
        407,
      );
      b.close();
      expect((await viaProxy(proxy, `http://page.test:${P}/`, authOf(a))).status).toBe(200);
    });

    it('destroys a closed session’s open tunnels, upstream side included', async () => {
      const s = session();
      const other = session();
      const t1 = await connect(proxy, `page.test:${P}`, authOf(s));
      const t2 = await connect(proxy, `page.test:${P}`, authOf(s));
      const kept = await connect(proxy, `page.test:${P}`, authOf(other));
      expect([t1.status, t2.status, kept.status]).toEqual([200, 200, 200]);
      const upstreams = page.open.size;
      s.close();
      await Promise.all([closed(t1.s), closed(t2.s)]);
      await waitUntil(
        () => (page.open.size === upstreams - 2 ? true : undefined),
        'both upstream connections closed',
        3000,
        10,
      );
      expect(kept.s.destroyed).toBe(false);
      kept.s.destroy();
    });

    it('closes the session when its signal aborts: sockets destroyed, credentials refused', async () => {
      const ctl = new AbortController();
      const s = session(policyGate(TABLE), LIMITS, ctl.signal);
      const t = await connect(proxy, `page.test:${P}`, authOf(s));
      expect(t.status).toBe(200);
      ctl.abort();
      await closed(t.s);
      expect((await connect(proxy, `page.test:${P}`, authOf(s))).status).toBe(407);
      const late = proxy.session(policyGate(TABLE), LIMITS, ctl.signal);
      expect((await viaProxy(proxy, `http://page.test:${P}/`, authOf(late))).status).toBe(407);
    });

    it('tells the gate when the session ends while it is asked, and connects nothing', async () => {
      let aborted = false;
      let asked!: () => void;
      const askedP = new Promise<void>((r) => (asked = r));
      const s = session({
        address: (_host, signal) =>
          new Promise((resolve) => {
            asked();
            signal.addEventListener('abort', () => {
              aborted = true;
              resolve(PAGE); // a gate that answers anyway: the proxy must still not connect
            });
          }),
      });
      const before = page.connections;
      const t = connect(proxy, `page.test:${P}`, authOf(s)).catch(() => ({ status: 0 }));
      await askedP;
      s.close();
      expect((await t).status).toBe(0); // the client socket went with the session
      expect(aborted).toBe(true);
      // The gate's late answer is refused (counted blocked): from then on nothing can connect.
      await waitUntil(() => (s.counts.blocked === 1 ? true : undefined), "the gate's late answer refused");
      expect(page.connections).toBe(before);
    });
  });

  describe('limits', () => {
    it('refuses requests past maxRequests without asking the gate, and counts them blocked', async () => {
      const gate = policyGate(TABLE);
      const s = session(gate, { ...LIMITS, maxRequests: 2 });
      expect((await viaProxy(proxy, `http://page.test:${P}/1`, authOf(s))).status).toBe(200);
      expect((await connect(proxy, `page.test:${P}`, authOf(s))).status).toBe(200);
      const third = await viaProxy(proxy, `http://page.test:${P}/3`, authOf(s));
      expect(third.status).toBe(403);
      expect(third.headers['x-sift-refused']).toBe('too_many_requests');
      expect((await connect(proxy, `page.test:${P}`, authOf(s))).status).toBe(403);
      expect(gate.asked).toHaveLength(2);
      expect(s.counts).toMatchObject({ requests: 4, blocked: 2 });
    });

    it('refuses a host past maxHosts, while known hosts still pass', async () => {
      const gate = policyGate(TABLE);
      const s = session(gate, { ...LIMITS, maxHosts: 1 });
      expect((await viaProxy(proxy, `http://page.test:${P}/`, authOf(s))).status).toBe(200);
      const other = await viaProxy(proxy, `http://localhost:${P}/`, authOf(s));
      expect(other.status).toBe(403);
      expect(other.headers['x-sift-refused']).toBe('too_many_hosts');
      expect((await viaProxy(proxy, `http://PAGE.test:${P}/`, authOf(s))).status).toBe(200);
      expect(gate.asked).toEqual(['page.test', 'page.test']);
      expect(s.counts).toMatchObject({ requests: 3, blocked: 1, hosts: 1 });
    });

    it('cuts the answer that crosses maxBytes and refuses the requests after it', async () => {
      const s = session(policyGate(TABLE), { ...LIMITS, maxBytes: 100_000 });
      const first = await viaProxy(proxy, `http://page.test:${P}/big?n=1000`, authOf(s));
      expect(first.body).toHaveLength(1000);
      const second = await viaProxy(proxy, `http://page.test:${P}/big?n=2000000`, authOf(s)).then(
        (a) => a.body.length,
        () => -1,
      );
      expect(second).toBeLessThan(100_000); // cut: an error or a short body, never the whole of it
      // Counted as it comes down, cut at the chunk that crosses the cap.
      expect(s.counts.bytes).toBeGreaterThan(100_000);
      expect(s.counts.bytes).toBeLessThan(100_000 + 2 * 65_536);
      const third = await viaProxy(proxy, `http://page.test:${P}/big?n=10`, authOf(s));
      expect(third.status).toBe(403);
      expect(third.headers['x-sift-refused']).toBe('too_large');
      const tunnel = await connect(proxy, `page.test:${P}`, authOf(s));
      expect(tunnel.head).toContain('X-Sift-Refused: too_large');
      expect(s.counts).toMatchObject({ requests: 4, blocked: 2 });
    });

    it(`holds at most ${MAX_SOCKETS} upstream connections of a session at once`, async () => {
      const s = session();
      const open = [];
      for (let i = 0; i < MAX_SOCKETS; i++) open.push(await connect(proxy, `page.test:${P}`, authOf(s)));
      expect(open.every((t) => t.status === 200)).toBe(true);
      const over = await connect(proxy, `page.test:${P}`, authOf(s));
      expect(over.status).toBe(503);
      expect(over.head).toContain('X-Sift-Refused: too_many_connections');
      // Another render is not held back by this one.
      expect((await connect(proxy, `page.test:${P}`, authOf(session()))).status).toBe(200);
      const upstreams = page.open.size;
      open[0].s.destroy();
      await closed(open[0].s);
      // The proxy sees the hang-up and closes the tunnel's upstream connection, which frees the
      // slot before the site sees that connection close.
      await waitUntil(() => (page.open.size < upstreams ? true : undefined), 'the tunnel upstream to close');
      expect((await connect(proxy, `page.test:${P}`, authOf(s))).status).toBe(200);
      expect(s.counts).toMatchObject({ requests: MAX_SOCKETS + 2, blocked: 1 });
      for (const t of open) t.s.destroy();
    });
  });

  describe('a hostile or broken client never takes the proxy down', () => {
    const stillWorks = async () => {
      const s = session();
      expect((await viaProxy(proxy, `http://page.test:${P}/ok`, authOf(s))).status).toBe(200);
    };

    it('answers malformed requests with 400 and oversized heads with 431', async () => {
      for (const [text, status] of [
        ['GARBAGE\r\n\r\n', 400],
        ['GET http://page.test/ HTTP/1.1\r\nBad Header\r\n\r\n', 400],
        [`GET http://page.test/ HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
        [`CONNECT page.test:1 HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ] as const) {
        const sock = await raw(proxy);
        sock.on('error', () => undefined);
        sock.write(text);
        expect(await readAll(sock)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      }
      await stillWorks();
    });

    it('refuses targets it cannot parse, with credentials, as 400 counted blocked', async () => {
      const s = session();
      for (const authority of [
        'page.test',
        'page.test:0',
        'page.test:99999',
        'user@page.test:80',
        '[::1:80',
      ]) {
        const c = await connect(proxy, authority, authOf(s));
        expect(c.status).toBe(400);
      }
      for (const url of ['/relative', 'ftp://page.test/', 'http://[zz]/']) {
        expect((await viaProxy(proxy, url, authOf(s))).status).toBe(400);
      }
      expect(s.counts).toMatchObject({ requests: 8, blocked: 8, hosts: 0 });
      await stillWorks();
    });

    it('survives clients that hang up mid-request, mid-tunnel and while the gate is asked', async () => {
      const half = await raw(proxy);
      half.write('GET http://page.test/ HTTP/1.1\r\nHost: pa');
      half.destroy();

      let release!: () => void;
      const gateWait = new Promise<void>((r) => (release = r));
      let asked = 0;
      const slow = session({
        address: () => {
          asked++;
          return gateWait.then(() => PAGE);
        },
      });
      // What the proxy holds for the slow session: its end of each client connection (by the
      // client's port), and the upstream sockets it opens once the gate has answered.
      const ends = new Map<number, Duplex>();
      const ups: net.Socket[] = [];
      const [hold, open] = [Session.prototype.hold, Session.prototype.open];
      const spies = [
        jest.spyOn(Session.prototype, 'hold').mockImplementation(function (this: Session, socket) {
          if (this === slow && socket instanceof net.Socket && socket.remotePort)
            ends.set(socket.remotePort, socket);
          return hold.call(this, socket);
        }),
        jest.spyOn(Session.prototype, 'open').mockImplementation(async function (this: Session, host, port) {
          const up = await open.call(this, host, port);
          if (this === slow) ups.push(up);
          return up;
        }),
      ];
      try {
        const [before, openBefore] = [page.connections, page.open.size];
        // With its Host: a request without one is refused (400) before the gate is asked.
        const goneGet = await raw(proxy);
        goneGet.write(
          `GET http://page.test:${P}/ HTTP/1.1\r\nHost: page.test\r\nProxy-Authorization: ${authOf(slow)}\r\n\r\n`,
        );
        const gone = await raw(proxy);
        gone.write(`CONNECT page.test:${P} HTTP/1.1\r\nProxy-Authorization: ${authOf(slow)}\r\n\r\n`);
        await waitUntil(
          () => (asked === 2 ? true : undefined),
          () => `the gate to be asked for both (${asked} so far)`,
        );
        const getPort = goneGet.localPort!;
        goneGet.destroy();
        gone.destroy();
        // The proxy sees the GET's client go: its end of that connection closes. (A CONNECT
        // client's hang-up reads as a half-close, which the proxy cannot see before it writes.)
        await waitUntil(
          () => (ends.get(getPort)?.destroyed ? true : undefined),
          "the proxy to see the GET's client go",
        );
        release();
        await waitUntil(
          () => (ups.length === 2 && ups.every((u) => u.destroyed) ? true : undefined),
          () => `both upstream sockets opened after the gate answered to be closed (${ups.length} opened)`,
        );
        // A request whose client had gone connects nothing. A CONNECT client's hang-up reads as a
        // half-close until the proxy writes to it: at most a connection that is closed at once.
        expect(page.connections).toBeLessThanOrEqual(before + 1);
        await waitUntil(
          () => (page.open.size === openBefore ? true : undefined),
          'the site to see it closed',
          3000,
          10,
        );
      } finally {
        for (const spy of spies) spy.mockRestore();
      }

      const s = session();
      const t = await connect(proxy, `page.test:${P}`, authOf(s));
      t.s.write(`GET /in-tunnel HTTP/1.1\r\nHost: page.test\r\n\r\n`);
      t.s.destroy();
      await stillWorks();
    });

    it('answers 502 when the allowed address refuses, and survives an upstream reset mid-answer', async () => {
      const s = session({ address: async () => PAGE });
      const free = await new Promise<number>((r) => {
        const probe = net.createServer().listen(0, PAGE, () => {
          const port = (probe.address() as net.AddressInfo).port;
          probe.close(() => r(port));
        });
      });
      expect((await connect(proxy, `page.test:${free}`, authOf(s))).status).toBe(502);
      expect((await viaProxy(proxy, `http://page.test:${free}/`, authOf(s))).status).toBe(502);
      const reset = await viaProxy(proxy, `http://page.test:${P}/reset`, authOf(s)).then(
        (a) => a.body,
        () => 'error',
      );
      expect(reset).not.toHaveLength(1000);
      expect(s.counts).toMatchObject({ requests: 3, blocked: 0 });
      await stillWorks();
    });
  });
});
