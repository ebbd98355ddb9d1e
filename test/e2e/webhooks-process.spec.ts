import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EVENT_TYPES } from '../../src/common/job-status';
import { waitUntil } from '../support/wait';
import { Fixture, slowArticle } from '../support/fixture';
import { kill, startSiftProcess, waitForJobIn, type SiftProcess } from '../support/process';
import { Receiver, newSecret } from '../support/receiver';

const TOKEN = 'webhook-process-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

/**
 * sift as a real process on a file database, its webhook receiver down: deliveries fail and wait
 * in the outbox; sift is SIGKILLed mid-job and started again with the receiver up. The receiver
 * then gets every event of the job, verified, each once by webhook-id, in seq order.
 */
describe('webhooks across a SIGKILL', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({ '/p/*': slowArticle(100) }).start();
  });
  afterAll(() => fx.stop());

  async function api(p: SiftProcess, method: string, route: string, body?: object) {
    const r = await fetch(`${p.url}${route}`, {
      method,
      headers: H,
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: (await r.json()) as any };
  }

  it('nothing is lost: every event arrives after the restart, once per webhook-id, in order', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-webhook-'));
    const env = {
      SIFT_DB: path.join(dir, 'sift.db'),
      SIFT_TOKENS: `${TOKEN}:hooks:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RUNNER_CONCURRENCY: '4',
      SIFT_WEBHOOK_RETRY_S: '1',
    };
    const secret = newSecret();
    // The receiver's port, with nothing listening on it for now.
    const rx = new Receiver(secret);
    await rx.start();
    const port = rx.port;
    await rx.stop();

    let sift = await startSiftProcess(env);
    let id = '';
    try {
      const targets = Array.from({ length: 100 }, (_, i) => ({ url: fx.url(`/p/${i}`) }));
      const sub = await api(sift, 'POST', '/v1/batch', {
        targets,
        on_restart: 'resume',
        webhook: { url: `http://127.0.0.1:${port}/hook`, secret, events: [...EVENT_TYPES] },
      });
      expect(sub.status).toBe(202);
      id = sub.body.id;
      // Mid-job, with deliveries failing against the closed port.
      await waitUntil(async () => {
        const d = (await api(sift, 'GET', `/v1/batch/${id}/deliveries`)).body;
        const first = d.deliveries[0];
        const view = (await api(sift, 'GET', `/v1/batch/${id}`)).body;
        return first?.attempts >= 1 && first.last_error?.code === 'connect_error' && view.targets_done >= 5
          ? true
          : undefined;
      }, 'failed attempts while the job runs');
      expect(await kill(sift)).toBeNull();

      await rx.start(port);
      sift = await startSiftProcess(env);
      const job = await waitForJobIn<{ status: string }>(sift, id, H, undefined, 60_000);
      expect(job.status).toBe('done');
      const events = (await api(sift, 'GET', `/v1/batch/${id}/events`)).body.events as {
        seq: number;
        type: string;
      }[];
      expect(events.map((e) => e.type)).toContain('batch.requeued');
      await waitUntil(
        () => rx.unique().length >= events.length || undefined,
        'every event delivered',
        60_000,
      );
      expect(rx.rejected).toEqual([]);
      const got = rx.unique();
      expect(got.map((r) => [r.payload.seq, r.payload.type])).toEqual(events.map((e) => [e.seq, e.type]));
      expect(got.map((r) => r.id)).toEqual(events.map((e) => `${id}:${e.seq}`));
      const deliveries = (await api(sift, 'GET', `/v1/batch/${id}/deliveries`)).body.deliveries as {
        state: string;
      }[];
      expect(deliveries.every((x) => x.state === 'delivered')).toBe(true);
    } finally {
      await kill(sift);
      await rx.stop();
    }
  }, 120_000);
});
