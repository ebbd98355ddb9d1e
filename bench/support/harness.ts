import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { AppModule } from '../../src/app.module';
import { configureApp } from '../../src/app.setup';

export const BENCH_TOKEN = 'bench-token-0001';

/** The real app, listening on a loopback port, over a fresh file database. */
export async function startSift(
  env: Record<string, string> = {},
): Promise<{ app: INestApplication; url: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-'));
  Object.assign(process.env, {
    SIFT_DB: path.join(dir, 'sift.db'),
    SIFT_TOKENS: `${BENCH_TOKEN}:bench:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    ...env,
  });
  const app = configureApp(await NestFactory.create(AppModule, { logger: false, bodyParser: false }));
  await app.listen(0, '127.0.0.1');
  const addr = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${addr.port}` };
}

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string | Uint8Array;
  /** Sent beside (or instead of) the harness's own authorization and content-type. */
  headers?: Record<string, string>;
}

export interface LoadOptions {
  /** The bearer token sent; null sends none. */
  token?: string | null;
}

export interface LoadResult {
  rps: number;
  errors: number;
  p99ms: number;
  statuses: Record<string, number>;
}

/**
 * Runs `connections` keep-alive request loops for `seconds` from a worker thread, so the load
 * generator has its own core and event loop instead of sharing sift's. `make` is serialised into
 * the worker: it may only use its argument (or it is the source of an expression that gives such
 * a function, evaluated once in the worker).
 */
export function load(
  origin: string,
  connections: number,
  seconds: number,
  make: ((i: number) => LoadRequest) | string,
  opts: LoadOptions = {},
): Promise<LoadResult> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { Pool } = require(workerData.undici);
    const make = eval(workerData.make);
    (async () => {
      const pool = new Pool(workerData.origin, { connections: workerData.connections });
      const end = Date.now() + workerData.seconds * 1000;
      let done = 0, errors = 0, i = 0;
      const lat = [];
      const statuses = {};
      const loop = async () => {
        while (Date.now() < end) {
          const r = make(i++);
          const t = performance.now();
          try {
            const auth = workerData.token === null ? {} : { authorization: 'Bearer ' + workerData.token };
            const res = await pool.request({ method: r.method, path: r.path, body: r.body,
              headers: { ...auth, 'content-type': 'application/json', ...(r.headers || {}) } });
            await res.body.dump({ limit: 1 << 30 });
            statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1;
            if (res.statusCode >= 400) errors++;
            done++;
            lat.push(performance.now() - t);
          } catch (e) { errors++; statuses[e.code || 'error'] = (statuses[e.code || 'error'] || 0) + 1; }
        }
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: workerData.connections }, loop));
      const elapsed = (performance.now() - started) / 1000;
      await pool.close();
      lat.sort((a, b) => a - b);
      parentPort.postMessage({ rps: done / elapsed, errors, p99ms: lat[Math.floor(lat.length * 0.99)] || 0, statuses });
    })();`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, {
      eval: true,
      workerData: {
        origin,
        connections,
        seconds,
        make: typeof make === 'string' ? make : `(${make.toString()})`,
        token: opts.token === undefined ? BENCH_TOKEN : opts.token,
        undici: require.resolve('undici'),
      },
    });
    w.once('message', (m: LoadResult) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}
