import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { Dcache } from '../../src/dcache';
import { createTestApp, waitForJob, waitUntil, FLEET_TOKEN, fleet } from '../support/app';
import { Fixture, send } from '../support/fixture';

const CAP = 3;

/** A raw NDJSON stream request; the socket reads nothing once the status line has come. */
function openStalled(port: number, path: string): Promise<{ socket: net.Socket; status: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let head = '';
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${FLEET_TOKEN}\r\n` +
          'Accept: application/x-ndjson\r\n\r\n',
      ),
    );
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (!m) return;
      socket.off('data', onData);
      socket.pause();
      resolve({ socket, status: Number(m[1]) });
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before a status line: ${head.slice(0, 200)}`)));
  });
}

/**
 * A client that stops reading its streams until the server's writes wait on a full socket
 * buffer, then hangs up, gets its admission slots back at once.
 */
describe('streams under a hostile reader', () => {
  let app: INestApplication;
  let fx: Fixture;
  let port: number;
  /** The server's side of every connection, to see when its writes wait for the reader. */
  const serverSockets = new Set<net.Socket>();

  beforeAll(async () => {
    fx = await new Fixture({ '/*': send(200, 'text/plain', 'a line of text') }).start();
    ({ app } = await createTestApp({ SIFT_FLEET_MAX_STREAMS: String(CAP), SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
    await app.listen(0, '127.0.0.1');
    const server = app.getHttpServer() as net.Server;
    server.on('connection', (s: net.Socket) => {
      serverSockets.add(s);
      s.once('close', () => serverSockets.delete(s));
    });
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  async function job(targets: number): Promise<string> {
    const sub = await request(app.getHttpServer())
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: Array.from({ length: targets }, (_, i) => ({ url: fx.url(`/p/${i}`) })) });
    expect(sub.status).toBe(202);
    expect(await waitForJob(app, sub.body.id)).toMatchObject({ status: 'done' });
    return sub.body.id as string;
  }

  it('a stream stalled on a full socket buffer and then hung up gives back its slot', async () => {
    // 40 results of 512 KiB: 20 MiB a stream, more than the kernel buffers of a connection hold.
    const big = await job(40);
    const result = JSON.stringify({ content: 'x'.repeat(512 * 1024) });
    await app
      .get(Dcache)
      .kysely.updateTable('batch_target')
      .set({ result })
      .where('job_id', '=', big)
      .execute();
    const small = await job(1);
    const stalled = await Promise.all(
      Array.from({ length: CAP }, () => openStalled(port, `/v1/batch/${big}/results`)),
    );
    expect(stalled.map((s) => s.status)).toEqual(Array(CAP).fill(200));
    const probe = () =>
      request(app.getHttpServer())
        .get(`/v1/batch/${small}/results`)
        .set({ ...fleet, Accept: 'application/x-ndjson' });
    expect((await probe()).status).toBe(429);
    // The server's writes now wait: bytes it could not hand to the kernel sit in its own buffers.
    await waitUntil(
      () => ([...serverSockets].filter((s) => s.writableLength > 0).length >= CAP ? true : undefined),
      'every stalled stream to fill its socket buffer',
    );
    for (const s of stalled) s.socket.destroy();
    const admitted = await waitUntil(
      async () => ((await probe()).status === 200 ? true : undefined),
      'a new stream to be admitted after the stalled ones hung up',
      5000,
    );
    expect(admitted).toBe(true);
    // Each slot came back once: the cap still holds.
    const again = await Promise.all(
      Array.from({ length: CAP }, () => openStalled(port, `/v1/batch/${big}/results`)),
    );
    expect(again.map((s) => s.status)).toEqual(Array(CAP).fill(200));
    expect((await probe()).status).toBe(429);
    for (const s of again) s.socket.destroy();
    await waitUntil(
      async () => ((await probe()).status === 200 ? true : undefined),
      'the slots to come back again',
      5000,
    );
  });
});
