import * as zlib from 'node:zlib';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { createTestApp, waitForJob, fleet } from '../support/app';
import { Fixture, html, redirect, send } from '../support/fixture';

/** Hostile and broken upstreams, as targets of one job: each fails alone, clearly; the rest run. */
describe('upstream faults', () => {
  let app: INestApplication;
  let fx: Fixture;
  const timers = new Set<NodeJS.Timeout>();
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    // Compressed once, here: compressing 64 MB inside the handler blocked this process (the app's
    // too) for long enough to time the target out on a slow machine.
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    fx = await new Fixture({
      '/reset-mid-body': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
        res.write('<html><body><p>half a page');
        setTimeout(() => res.socket?.destroy(), 20);
      },
      '/trickle': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const t = setInterval(() => res.write('x'), 1000);
        timers.add(t as unknown as NodeJS.Timeout);
        res.on('close', () => clearInterval(t));
      },
      '/never': () => undefined,
      '/gzip-bomb': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        res.end(bomb);
      },
      '/unknown-charset': send(
        200,
        'text/html; charset=x-no-such-charset',
        html('<article><p>Plain ascii words survive an unknown charset label.</p></article>'),
      ),
      '/wrong-charset': send(200, 'text/plain; charset=utf-8', Buffer.from('caf\xe9 cr\xe8me', 'latin1')),
      '/fifty-mb': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(50 * 1024 * 1024) });
        const chunk = Buffer.alloc(1024 * 1024, 0x61);
        let sent = 0;
        const pump = () => {
          while (sent < 50 && res.write(chunk)) sent++;
          if (sent < 50) res.once('drain', pump);
          else res.end();
        };
        pump();
      },
      '/fifty-mb-chunked': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(1024 * 1024, 0x62);
        let sent = 0;
        const pump = () => {
          while (sent < 50 && !res.destroyed && res.write(chunk)) sent++;
          if (sent < 50 && !res.destroyed) res.once('drain', pump);
          else res.end();
        };
        pump();
      },
      '/deep': send(
        200,
        'text/html',
        `<html><body>${'<div>'.repeat(100_000)}deep text${'</div>'.repeat(100_000)}</body></html>`,
      ),
      '/hop1': redirect('/hop2'),
      '/hop2': redirect('/hop3'),
      '/hop3': redirect('http://169.254.169.254/latest/meta-data/'),
      '/fine': send(
        200,
        'text/html',
        html('<article><p>A perfectly normal page, with words enough.</p></article>', 'Fine'),
      ),
    }).start();
    ({ app } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RUNNER_CONCURRENCY: '4',
      SIFT_PER_HOST_CONCURRENCY: '4',
    }));
  });
  afterAll(async () => {
    for (const t of timers) clearInterval(t);
    await app.close();
    await fx.stop();
  });

  it('each fault ends its own target with a clear code and hint, and the targets after it run normally', async () => {
    const plan: [string, string][] = [
      ['/reset-mid-body', 'connect_error'],
      ['/fine', 'done'],
      ['/trickle', 'timeout'],
      ['/never', 'timeout'],
      ['/gzip-bomb', 'too_large'],
      ['/unknown-charset', 'done'],
      ['/wrong-charset', 'done'],
      ['/fifty-mb', 'too_large'],
      ['/fifty-mb-chunked', 'too_large'],
      ['/deep', 'done'],
      ['/hop1', 'blocked_address'],
      ['/fine', 'done'],
    ];
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        // Only the targets meant to time out get a short timeout: the others must end by their own
        // fault however slow the machine is.
        targets: plan.map(([p, o]) => ({
          url: fx.url(p),
          options: { timeout_ms: o === 'timeout' ? 1500 : 15_000, max_age_s: 0 },
        })),
      });
    expect(sub.status).toBe(202);
    const job = await waitForJob(app, sub.body.id, fleet);
    expect(job.status).toBe('partial');
    const results = (await http().get(`/v1/batch/${sub.body.id}/results`).set(fleet)).body.results;
    const outcome = results.map((r: { status: string; error: { code: string } | null }) =>
      r.status === 'done' ? 'done' : r.error!.code,
    );
    expect(outcome).toEqual(plan.map(([, o]) => o));
    for (const r of results) if (r.error) expect(r.error.hint.length).toBeGreaterThan(10);
    expect(results[5].result.content).toContain('Plain ascii words survive');
    expect(results[6].result.content).toContain('caf');
    expect(results[9].result.content).toContain('deep text');
    expect(results[11].result.title).toBe('Fine');
    // The process is healthy afterwards.
    expect((await http().get('/healthz')).status).toBe(200);
  }, 60_000);
});
