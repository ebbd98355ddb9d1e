import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp } from '../support/app';
import { Fixture, html, send } from '../support/fixture';

/**
 * Issue 32, findings 2, 6 and 14: what one caller sends or points sift at never stalls or starves
 * the others. Each attack runs while /healthz and another caller's plain fetches are timed, one
 * after another: the bounds are 1 s for /healthz and 3 s for the other fetch.
 */
const ATTACKER = 'attacker-token-32';
const BYSTANDER = 'bystander-token-32';
const MALLORY = 'mallory-token-32';
const attacker = { Authorization: `Bearer ${ATTACKER}` };
const bystander = { Authorization: `Bearer ${BYSTANDER}` };

describe('hostile extraction (issue 32)', () => {
  let app: INestApplication;
  let fx: Fixture;
  const http = () => request(app.getHttpServer());

  const plain = html(
    `<article><h1>Plain page</h1><p>${'A plain paragraph of text. '.repeat(30)}</p></article>`,
  );

  beforeAll(async () => {
    fx = await new Fixture({
      '/plain': send(200, 'text/html', plain),
      // Finding 2: one unclosed tag, repeated (20 KiB).
      '/unclosed': send(200, 'text/html', '<div id="root" '.repeat(1400)),
    }).start();
    ({ app } = await createTestApp({
      SIFT_TOKENS: `${ATTACKER}:attacker:fleet,${BYSTANDER}:bystander:fleet,${MALLORY}:mallory:restricted`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_EXTRACT_WORKERS: '2',
    }));
    // Both extraction workers loaded before anything is timed.
    const warm = (n: number) =>
      http()
        .post('/v1/fetch')
        .set(bystander)
        .send({ url: fx.url(`/plain?warm=${n}`), format: 'text' })
        .expect(200);
    await Promise.all([warm(0), warm(1)]);
  }, 120_000);
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  let probes = 0;
  /**
   * Until `attack` settles: /healthz, and the bystander's plain fetch of a page no cache holds,
   * each asked again as soon as it answered; the time each took.
   */
  async function probeWhile(attack: Promise<unknown>): Promise<{ healthz: number[]; fetches: number[] }> {
    let over = false;
    const settled = attack.then(
      () => (over = true),
      () => (over = true),
    );
    const timed = async (ask: () => Promise<{ status: number }>, into: number[]) => {
      do {
        const started = performance.now();
        expect((await ask()).status).toBe(200);
        into.push(performance.now() - started);
      } while (!over);
    };
    const healthz: number[] = [];
    const fetches: number[] = [];
    await Promise.all([
      timed(() => http().get('/healthz'), healthz),
      timed(
        () =>
          http()
            .post('/v1/fetch')
            .set(bystander)
            .send({ url: fx.url(`/plain?probe=${probes++}`), format: 'text' }),
        fetches,
      ),
      settled,
    ]);
    return { healthz, fetches };
  }

  function expectServed(t: { healthz: number[]; fetches: number[] }): void {
    expect(Math.max(...t.healthz)).toBeLessThan(1000);
    expect(Math.max(...t.fetches)).toBeLessThan(3000);
  }

  it('finding 2: a page of one unclosed tag repeated is judged without holding up anyone', async () => {
    const attack = http()
      .post('/v1/fetch')
      .set(attacker)
      .send({ url: fx.url('/unclosed'), format: 'text' });
    const timings = await probeWhile(attack);
    const r = await attack;
    expect([r.status, r.body.verdict]).toEqual([200, 'empty']);
    expectServed(timings);
  }, 120_000);
});
