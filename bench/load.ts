/**
 * bench/load (loopback only, bounded in time): cached POST /v1/fetch at 64 connections for 10 s;
 * then a submit storm of 50 concurrent POST /v1/batch of 100 targets each while 20 clients poll
 * and stream events. Every job must finish with every result present and no 5xx.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { kill, startSiftProcess } from '../test/support/process';
import { load, type LoadRequest } from './support/harness';

const TOKEN = 'bench-token-0001'; // the harness's load generator sends this one
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);

export async function benchLoad(): Promise<Record<string, number | string>> {
  const server = http.createServer((req, res) => {
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
    SIFT_TOKENS: `${TOKEN}:load:fleet`,
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
    server.close();
  }
  return out;
}
