import * as http from 'node:http';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Fixture, send } from '../support/fixture';
import { kill, startSiftProcess, type SiftProcess } from '../support/process';
import { waitUntil } from '../support/wait';
import { spawnSift } from '../support/cli-child';

/**
 * SIGTERM stops sift within SIFT_SHUTDOWN_GRACE_MS (plus 2 s) whatever its clients do.
 * Clients holding an event stream, an NDJSON follow and an MCP call each get a last message saying
 * the server stops; the job's targets are intact, and a restart with `resume` finishes the job.
 */
const TOKEN = 'stopping-token-50-abcdefghijklmnop';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const GRACE_MS = 1500;

/** A streaming GET or POST whose body is kept as it comes; `ended` once the server ends it. */
function open(url: string, o: { method?: string; headers: Record<string, string>; body?: string }) {
  let text = '';
  const ended = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(url, { method: o.method ?? 'GET', headers: o.headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
  return { ended, seen: () => text };
}

describe('SIGTERM with clients attached stops sift within the grace', () => {
  let fx: Fixture;
  let p: SiftProcess | undefined;
  const held: (() => void)[] = [];
  let letThrough = false;

  beforeAll(async () => {
    fx = await new Fixture({
      // Each page answers only when the test lets it: the job stays live as long as it must.
      '/slow/*': (req, res) => {
        const answer = () => send(200, 'text/plain', 'at last')(req, res);
        if (letThrough) answer();
        else held.push(answer);
      },
    }).start();
  });
  afterAll(async () => {
    if (p) await kill(p);
    held.splice(0).forEach((h) => h());
    await fx.stop();
  });

  it('SIGTERM with an SSE client, an NDJSON follow, an MCP call and the CLI attached: gone within the grace plus 2 s, each told', async () => {
    const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-stop-')), 'sift.db');
    const env = {
      SIFT_DB: db,
      SIFT_TOKENS: `${TOKEN}:ops:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_SHUTDOWN_GRACE_MS: String(GRACE_MS),
      SIFT_PER_HOST_CONCURRENCY: '2',
    };
    p = await startSiftProcess(env);
    const targets = Array.from({ length: 6 }, (_, i) => ({ url: fx.url(`/slow/${i}`) }));
    const sub = (await (
      await fetch(`${p.url}/v1/batch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ targets, on_restart: 'resume', options: { timeout_ms: 120_000 } }),
      })
    ).json()) as { id: string };
    const job = `${p.url}/v1/batch/${sub.id}`;
    await waitUntil(() => (held.length >= 2 ? true : undefined), 'two targets in flight');
    const sse = open(`${job}/events`, { headers: { ...H, accept: 'text/event-stream' } });
    const ndjson = open(`${job}/results?follow=true`, { headers: { ...H, accept: 'application/x-ndjson' } });
    // The command line following a job of its own, its results to a file.
    const out = path.join(path.dirname(db), 'results.ndjson');
    const urls = path.join(path.dirname(db), 'urls.txt');
    fs.writeFileSync(
      urls,
      `${fx.url('/slow/cli-1')}\n${fx.url('/slow/cli-2').replace('127.0.0.1', 'localhost')}\n`,
    );
    const cli = spawnSift(['batch', urls, '--wait', '--out', out, '--on-restart', 'resume'], {
      SIFT_URL: p.url,
      SIFT_TOKEN: TOKEN,
    });
    const mcp = open(`${p.url}/mcp`, {
      method: 'POST',
      headers: { ...H, accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        // Another host: the job's targets hold its host's two places.
        params: { name: 'fetch', arguments: { url: fx.url('/slow/mcp').replace('127.0.0.1', 'localhost') } },
      }),
    });
    await waitUntil(
      () =>
        sse.seen().includes('batch.running') && held.length >= 4 && /job \S+/.test(cli.err())
          ? true
          : undefined,
      'the streams open and the MCP call in flight',
    );
    const t = Date.now();
    const code = await kill(p, 'SIGTERM');
    const took = Date.now() - t;
    expect(took).toBeLessThan(GRACE_MS + 2000);
    expect(code === null || code === 0).toBe(true);
    const [events, lines, call] = await Promise.all([sse.ended, ndjson.ended, mcp.ended]);
    expect(events.text).toMatch(/event: stopping\ndata: \{"retry_after_s":\d+\}\n\n$/);
    expect(lines.text.trim().split('\n').pop()).toMatch(/^\{"stopping":true,"retry_after_s":\d+\}$/);
    expect(call.status).toBe(503);
    // The command line says the server stopped and how to resume; it wrote nothing, so no file.
    expect(await cli.code).toBe(1);
    const cliJob = /job ([0-9a-f-]+)/.exec(cli.err())![1];
    expect(cli.err()).toContain(`the server stopped while following job ${cliJob}: it said it was stopping`);
    expect(cli.err()).toContain(`sift watch ${cliJob} --out ${out}`);
    expect(fs.existsSync(out)).toBe(false);
    expect(JSON.parse(call.text)).toMatchObject({
      id: 7,
      error: { message: expect.stringMatching(/stopping/) },
    });
    // The job's targets are intact: a restart resumes it, and it ends done.
    letThrough = true;
    held.splice(0).forEach((h) => h());
    p = await startSiftProcess(env);
    let last: unknown;
    const done = await waitUntil(
      async () => {
        const v = (await (await fetch(job.replace(/^http:\/\/[^/]+/, p!.url), { headers: H })).json()) as {
          status: string;
          targets_done: number;
        };
        last = v;
        return v.status === 'done' ? v : undefined;
      },
      () => `the resumed job to end; last seen ${JSON.stringify(last)}`,
      30_000,
    );
    expect(done.targets_done).toBe(6);
  }, 60_000);
});
