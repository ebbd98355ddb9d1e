/**
 * bench/load (loopback only, bounded in time): cached POST /v1/fetch at 64 connections for 10 s;
 * the same well-behaved caller again while sift is abused (64 connections of unauthenticated gzip
 * body bombs, a restricted caller flooding /v1/fetch, a caller opening streams past its cap); then
 * a submit storm of 50 concurrent POST /v1/batch of 100 targets each while 20 clients poll
 * and stream events. Every job must finish with every result present and no 5xx.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { kill, rssOf, startSiftProcess, type SiftProcess } from '../test/support/process';
import { load, type LoadRequest } from './support/harness';

const TOKEN = 'bench-token-0001'; // the harness's load generator sends this one
const FLOOD = 'flood-token-0123456789abcdef';
const HOG = 'hog-token-0123456789abcdefgh';
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);

export async function benchLoad(): Promise<Record<string, number | string>> {
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/hold') {
      held.push(res);
      return;
    }
    const body = `<!doctype html><html><head><title>${req.url}</title></head><body><article>${'<p>Load test page words, several of them, in a paragraph.</p>'.repeat(40)}</article></body></html>`;
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(body);
    }, 5);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-load-')), 'sift.db');
  const sift = await startSiftProcess({
    SIFT_DB: db,
    SIFT_TOKENS: `${TOKEN}:load:fleet,${FLOOD}:flood:restricted,${HOG}:hog:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_FLEET_MAX_LIVE_JOBS: '64',
    SIFT_PER_HOST_CONCURRENCY: '16',
  });
  const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const out: Record<string, number | string> = {};
  try {
    const body = JSON.stringify({ url: `${origin}/cached` });
    const mk = new Function(
      'i',
      `return { method: 'POST', path: '/v1/fetch', body: ${JSON.stringify(body)} }`,
    ) as (i: number) => LoadRequest;
    await load(sift.url, 1, 0.3, mk);
    const cached = await load(sift.url, 64, SECONDS, mk);
    out['cached /v1/fetch, 64 connections: req/s'] = Math.round(cached.rps);
    out['cached /v1/fetch p99 ms'] = +cached.p99ms.toFixed(1);
    out['cached /v1/fetch errors'] = cached.errors;
    Object.assign(out, await abuseRun(sift, origin, mk));

    // The storm: 50 submits at once, 20 watchers polling and streaming while the jobs run.
    let fivexx = 0;
    const count = (status: number) => {
      if (status >= 500) fivexx++;
    };
    const t = performance.now();
    const ids = await Promise.all(
      Array.from({ length: 50 }, async (_, j) => {
        const targets = Array.from({ length: 100 }, (_, i) => ({ url: `${origin}/storm/${j}/${i}` }));
        const r = await request(`${sift.url}/v1/batch`, {
          method: 'POST',
          headers: H,
          body: JSON.stringify({ targets }),
        });
        count(r.statusCode);
        const v = (await r.body.json()) as { id: string };
        return v.id;
      }),
    );
    out['storm: submits accepted'] = ids.filter(Boolean).length;
    const finished = new Set<string>();
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        const mine = ids.filter((_, i) => i % 20 === w);
        for (const id of mine) {
          // Half the watchers stream events to the end, half poll the job view.
          if (w % 2 === 0) {
            const r = await request(`${sift.url}/v1/batch/${id}/events`, {
              headers: { ...H, accept: 'text/event-stream' },
            });
            count(r.statusCode);
            await r.body.text();
          }
          for (;;) {
            const r = await request(`${sift.url}/v1/batch/${id}`, { headers: H });
            count(r.statusCode);
            const v = (await r.body.json()) as { status: string };
            if (['done', 'partial', 'failed', 'cancelled'].includes(v.status)) {
              if (v.status === 'done') finished.add(id);
              break;
            }
            await new Promise((res) => setTimeout(res, 50));
          }
        }
      }),
    );
    out['storm: seconds until all 5,000 targets finished'] = +((performance.now() - t) / 1000).toFixed(1);
    out['storm: jobs done'] = finished.size;
    let present = 0;
    for (const id of ids) {
      const r = await request(`${sift.url}/v1/batch/${id}/results`, {
        headers: { ...H, accept: 'application/x-ndjson' },
      });
      count(r.statusCode);
      for (const line of (await r.body.text()).trim().split('\n')) {
        const x = JSON.parse(line) as { status: string; result: unknown };
        if (x.status === 'done' && x.result) present++;
      }
    }
    out['storm: results present (of 5,000)'] = present;
    out['storm: 5xx answers'] = fivexx;
  } finally {
    await kill(sift, 'SIGTERM');
    for (const res of held) res.end();
    server.close();
  }
  return out;
}

/**
 * The well-behaved caller's cached fetches at 16 connections while, at once: 64 connections send
 * an unauthenticated 30 KB gzip body that would inflate to 30 MB, a restricted caller floods
 * /v1/fetch at 32 connections (literal loopback URLs, refused as blocked without a DNS lookup),
 * and a fleet caller holds its 32 streams and asks for 8 more.
 */
async function abuseRun(
  sift: SiftProcess,
  origin: string,
  mk: (i: number) => LoadRequest,
): Promise<Record<string, number | string>> {
  const bomb = zlib.gzipSync(`[${'{},'.repeat(10_000_000)}{}]`, { level: 9 }).toString('base64');
  const bombs = `(() => { const body = Buffer.from('${bomb}', 'base64');
    return () => ({ method: 'POST', path: '/v1/batch', body, headers: { 'content-encoding': 'gzip' } }); })()`;
  const flood = `(() => () => ({ method: 'POST', path: '/v1/fetch',
    body: JSON.stringify({ url: 'http://127.0.0.1:9/' + Math.random(), max_age_s: 0 }) }))()`;
  const plain = await load(sift.url, 16, SECONDS, mk);
  const H = { authorization: `Bearer ${HOG}`, 'content-type': 'application/json' };
  const job = await request(`${sift.url}/v1/batch`, {
    method: 'POST',
    headers: H,
    body: JSON.stringify({ targets: [{ url: `${origin}/hold` }] }),
  });
  const { id } = (await job.body.json()) as { id: string };
  const streams: { status: number; close: () => void }[] = [];
  let rssPeak = rssOf(sift.child.pid!);
  const rssWatch = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(sift.child.pid!))), 100);
  const opening = (async () => {
    for (let i = 0; i < 40; i++) {
      const ac = new AbortController();
      const r = await request(`${sift.url}/v1/batch/${id}/events`, {
        headers: { ...H, accept: 'text/event-stream' },
        signal: ac.signal,
      });
      if (r.statusCode !== 200) await r.body.dump();
      else r.body.on('error', () => undefined).resume();
      streams.push({ status: r.statusCode, close: () => ac.abort() });
    }
  })();
  const [good, bombed, flooded] = await Promise.all([
    load(sift.url, 16, SECONDS, mk),
    load(sift.url, 64, SECONDS, bombs, { token: null }),
    load(sift.url, 32, SECONDS, flood, { token: FLOOD }),
    opening,
  ]);
  clearInterval(rssWatch);
  for (const s of streams) s.close();
  await request(`${sift.url}/v1/batch/${id}`, { method: 'DELETE', headers: H }).then((r) => r.body.dump());
  const count = (statuses: Record<string, number>) =>
    Object.entries(statuses)
      .map(([k, v]) => `${k}×${v}`)
      .join(' ');
  return {
    'plain: cached /v1/fetch, 16 connections: req/s': Math.round(plain.rps),
    'plain: p99 ms': +plain.p99ms.toFixed(1),
    'abuse: well-behaved cached /v1/fetch, 16 connections: req/s': Math.round(good.rps),
    'abuse: well-behaved p99 ms': +good.p99ms.toFixed(1),
    'abuse: well-behaved errors': good.errors,
    'abuse: body bombs answered': count(bombed.statuses),
    'abuse: restricted flood answered': count(flooded.statuses),
    'abuse: streams (of 40 asked)': count(
      streams.reduce<Record<string, number>>((a, s) => ({ ...a, [s.status]: (a[s.status] ?? 0) + 1 }), {}),
    ),
    'abuse: sift peak RSS MB': Math.round(rssPeak / 1024 / 1024),
  };
}
