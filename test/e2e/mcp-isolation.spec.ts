import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, tableResolver, type TestApp } from '../support/app';
import { articleHtml, Fixture, send } from '../support/fixture';
import { prng } from '../support/prng';
import { idle } from '../support/wait';

/**
 * MCP answers go only to their own request. A restricted caller and a fleet caller share
 * the MCP servers sift keeps between POSTs; ids collide, a POST repeats an id, callers hang up
 * mid-call, calls end in any order. No answer ever reaches another caller or another call.
 */
const FLEET = 'fleet-token-49-mcp';
const RESTRICTED = 'restricted-token-49-mcp';

/** How long slow-0.test takes to resolve: the refused call of the first test would fetch it. */
const SLOW_LOOKUP_MS = 1500;

type Rpc = { jsonrpc: '2.0'; id: number; method: string; params: Record<string, unknown> };
type Answer = {
  id: number;
  result?: { content: { text: string }[]; structuredContent?: object; isError?: boolean };
  error?: unknown;
};

describe('MCP answers only to its own request', () => {
  let t: TestApp;
  let base: string;
  let fx: Fixture;
  const random = prng(49);

  /** `slow-N.test` resolves after a while to a loopback address: blocked for the restricted caller. */
  const resolve = tableResolver({ 'fixture.test': ['127.0.0.1'] });
  const resolver = async (host: string) => {
    if (!/^slow-\d+\.test$/.test(host)) return resolve(host);
    await idle(host === 'slow-0.test' ? SLOW_LOOKUP_MS : Math.floor(random() * 300), 'a slow name lookup');
    return [{ address: '127.0.0.9', family: 4 }];
  };

  beforeAll(async () => {
    fx = await new Fixture({
      // The fleet caller's page n, answered after up to 200 ms.
      '/echo': (req, res) => {
        const n = new URL(req.url ?? '/', 'http://x').searchParams.get('n');
        setTimeout(
          () => send(200, 'text/html', articleHtml(`Echo marker-${n}`, 4))(req, res),
          Math.floor(random() * 200),
        );
      },
    }).start();
    t = await createTestApp(
      {
        SIFT_TOKENS: `${FLEET}:fleet-49:fleet,${RESTRICTED}:restricted-49:restricted`,
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
        SIFT_RESTRICTED_FETCH_CONCURRENCY: '64',
      },
      { resolver },
    );
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.app.close();
    await fx?.stop();
  });

  const call = (id: number, name: string, args: Record<string, unknown>): Rpc => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  const post = async (token: string, body: unknown, signal?: AbortSignal) => {
    const r = await fetch(`${base}/mcp`, {
      method: 'POST',
      signal,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? (JSON.parse(text) as Answer | Answer[]) : undefined };
  };
  // The whole answer: its structuredContent (a fetch's text is its content alone), or an error's text.
  const toolText = (a: Answer) =>
    a.result?.structuredContent
      ? JSON.stringify(a.result.structuredContent)
      : (a.result?.content[0]?.text ?? '');

  it('a POST that repeats an id is refused; no call of it answers the next POST of anyone', async () => {
    const repeated = await post(RESTRICTED, [
      call(1, 'batch_status', { id: 'no-such-job' }),
      call(1, 'fetch', { url: 'http://slow-0.test/' }),
    ]);
    expect(repeated.status).toBe(400);
    expect(repeated.body).toMatchObject({ error: { code: -32600 }, id: null });
    // The next POSTs with id 1, one per caller, each while the refused slow call would still run.
    const fleet = await post(FLEET, call(1, 'fetch', { url: fx.url('/echo?n=first') }));
    expect(toolText(fleet.body as Answer)).toContain('marker-first');
    const restricted = await post(RESTRICTED, call(1, 'batch_status', { id: 'another-job' }));
    const own = JSON.parse(toolText(restricted.body as Answer)) as { code: string };
    expect(own.code).toBe('not_found');
    // The same calls once the refused slow call would have ended: still each caller's own. It
    // never runs, so nothing marks that moment: the time its lookup would take, and a little more.
    await idle(SLOW_LOOKUP_MS + 100, 'past the end the refused slow call would have had');
    const later = await post(FLEET, call(1, 'fetch', { url: fx.url('/echo?n=later') }));
    expect(toolText(later.body as Answer)).toContain('marker-later');
  }, 30_000);

  it("200 interleaved calls from two callers with colliding ids: every answer is its own call's", async () => {
    /** What the answer to call n must say: the fleet caller's page, the restricted caller's refusal. */
    const expected = (n: number) => (n % 2 === 0 ? `marker-${n}` : `slow-${n}.test`);
    const callOf = (n: number, id: number): Rpc =>
      n % 2 === 0
        ? call(id, 'fetch', { url: fx.url(`/echo?n=${n}`), format: 'text' })
        : call(id, 'fetch', { url: `http://slow-${n}.test/` });
    let checked = 0;
    let refused = 0;
    const one = async (n: number) => {
      const token = n % 2 === 0 ? FLEET : RESTRICTED;
      if (n % 13 === 5) {
        // A repeated id: refused whole.
        const r = await post(token, [callOf(n, 1), callOf(n + 2, 1)]);
        expect(r.status).toBe(400);
        refused++;
        return;
      }
      if (n % 11 === 3) {
        // The caller hangs up mid-call: what the server was running for it goes nowhere.
        const gone = new AbortController();
        setTimeout(() => gone.abort(), Math.floor(random() * 150));
        await post(token, callOf(n, 1), gone.signal).catch(() => undefined);
        return;
      }
      // Two calls in one POST (distinct ids) or one; ids collide across every POST.
      const calls = n % 7 === 0 ? [callOf(n, 1), callOf(n + 2, 2)] : [callOf(n, 1)];
      const r = await post(token, calls.length === 1 ? calls[0] : calls);
      expect(r.status).toBe(200);
      const answers = Array.isArray(r.body) ? r.body : [r.body!];
      expect(answers.map((a) => a.id).sort()).toEqual(calls.map((c) => c.id).sort());
      for (const a of answers) {
        const m = a.id === 1 ? n : n + 2;
        const text = toolText(a);
        expect(text).toContain(expected(m));
        // Nothing of another call: no other marker, no other host.
        for (const other of text.match(/marker-\d+|slow-\d+\.test/g) ?? []) expect(other).toBe(expected(m));
        checked++;
      }
    };
    // Ten at a time, the two callers interleaved.
    for (let wave = 0; wave < 20; wave++)
      await Promise.all(Array.from({ length: 10 }, (_, i) => one(wave * 10 + i + 1)));
    expect(checked).toBeGreaterThan(150);
    expect(refused).toBeGreaterThan(10);
  }, 120_000);
});
