import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { ExtractPool } from '../../src/extract/extract-pool';
import { TYPESCRIPT_SOURCES } from '../../src/tuning/typescript-worker';
import { ensureBuilt, NODE_FLAGS, ROOT } from '../support/process';

describe('ExtractPool', () => {
  it('extracts in worker threads, as inline extraction does', async () => {
    const pool = new ExtractPool({ size: 2 });
    const inline = new ExtractPool({ size: 0 });
    const html =
      '<html><head><title>T</title></head><body><article><p>Words in a paragraph, enough of them to count as text.</p></article></body></html>';
    const [a, b] = await Promise.all([
      pool.extract(html, 'http://x.test/', 'text'),
      inline.extract(html, 'http://x.test/', 'text'),
    ]);
    expect(a).toEqual(b);
    expect(a.title).toBe('T');
    await pool.close();
  });

  it('a page that overruns the time limit fails alone with timeout, and the pool goes on', async () => {
    const pool = new ExtractPool({ size: 1, timeoutMs: 1500 });
    expect((await pool.extract('<p>warm</p>', 'http://x.test/', 'text')).content).toContain('warm');
    const big = `<html><body>${'<p>word word word, word.</p>'.repeat(300_000)}</body></html>`;
    await expect(pool.extract(big, 'http://x.test/', 'markdown')).rejects.toMatchObject({ code: 'timeout' });
    // The worker was replaced: the next page extracts normally.
    const ok = await pool.extract('<html><body><p>after</p></body></html>', 'http://x.test/', 'text');
    expect(ok.content).toContain('after');
    await pool.close();
  });

  describe('a worker is handed its next page before it answers the one it is on', () => {
    const module = path.join(__dirname, '..', 'fixtures', 'timed-extract.ts');
    const page = (pool: ExtractPool, html: string, extract?: object) =>
      pool.extract(html, 'http://x.test/', 'text', { extract: extract as never }).then((x) => x.content);

    it('so it goes on to that page while the main thread is busy', async () => {
      const pool = new ExtractPool({ size: 1, module });
      await page(pool, 'warm 0');
      const began = new Float64Array(new SharedArrayBuffer(16));
      const opts = { began, at: { a: 0, b: 1 } };
      const both = Promise.all([page(pool, 'a 200', opts), page(pool, 'b 0', opts)]);
      // The main thread is blocked for 800 ms, as by a long statement: the worker ends page a at
      // about 200 ms and begins page b without waiting for the main thread to send it.
      const until = Date.now() + 800;
      while (Date.now() < until);
      expect(await both).toEqual(['a', 'b']);
      expect(began[1] - began[0]).toBeGreaterThanOrEqual(190);
      // b began while the main thread was still blocked: nothing sent it after a ended.
      expect(began[1]).toBeLessThan(until);
      await pool.close();
    });

    it('but not behind a long page: the next goes to whichever worker is free first', async () => {
      const pool = new ExtractPool({ size: 2, module });
      await Promise.all([page(pool, 'warm 100'), page(pool, 'warm 100')]);
      // A page of 300,000 characters (that this extractor spends 1 s on) and a short one of 100 ms
      // take both workers; a third waits for the worker that ends first.
      const long = `long 1000 ${'x'.repeat(300_000)}`;
      const began = new Float64Array(new SharedArrayBuffer(16));
      const all = Promise.all([
        page(pool, long, { began, at: { long: 1 } }),
        page(pool, 'short 100'),
        page(pool, 'c 0', { began, at: { c: 0 } }),
      ]);
      expect(await all).toEqual(['long', 'short', 'c']);
      // Behind the long page, c could not begin before its 1,000 ms were over.
      expect(began[0]).toBeLessThan(began[1] + 1000);
      await pool.close();
    });

    it('workers start as pages need them: none before the first, one for a page at a time, then up to the size', async () => {
      const pool = new ExtractPool({ size: 2, module });
      expect(pool.workers).toBe(0);
      for (const p of ['a 0', 'b 0', 'c 0']) expect(await page(pool, p)).toBe(p.split(' ')[0]);
      expect(pool.workers).toBe(1);
      // Two pages at once while the one worker is busy: a second starts for them.
      expect(await Promise.all([page(pool, 'd 300'), page(pool, 'e 300'), page(pool, 'f 0')])).toEqual([
        'd',
        'e',
        'f',
      ]);
      expect(pool.workers).toBe(2);
      await Promise.all(['g', 'h', 'i', 'j'].map((p) => page(pool, `${p} 50`)));
      expect(pool.workers).toBe(2);
      await pool.close();
      await expect(page(pool, 'k 0')).rejects.toThrow('the extraction pool is closed');
      expect(pool.workers).toBe(2);
    });

    it("each page's time limit counts from when the worker begins on it", async () => {
      const pool = new ExtractPool({ size: 1, module, timeoutMs: 600 });
      await page(pool, 'warm 0');
      // Handed together, b waits 400 ms behind a: its 400 ms of its own stay within the limit.
      expect(await Promise.all([page(pool, 'a 400'), page(pool, 'b 400')])).toEqual(['a', 'b']);
      await pool.close();
    });

    it('the pages a lost worker held and had not begun go to its replacement, in order', async () => {
      const pool = new ExtractPool({ size: 1, module, timeoutMs: 500 });
      await page(pool, 'warm 0');
      const results = await Promise.allSettled([
        page(pool, 'slow 5000'),
        page(pool, 'b 0'),
        page(pool, 'exit 0'),
        page(pool, 'c 0'),
        page(pool, 'd 0'),
      ]);
      expect(
        results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as { code: string }).code)),
      ).toEqual(['timeout', 'b', 'extraction_failed', 'c', 'd']);
      // The pool goes on.
      expect(await page(pool, 'after 0')).toBe('after');
      await pool.close();
    });

    it('closing the pool answers the pages its workers held', async () => {
      const pool = new ExtractPool({ size: 1, module });
      await page(pool, 'warm 0');
      const held = Promise.allSettled([page(pool, 'a 300'), page(pool, 'b 0'), page(pool, 'c 0')]);
      await pool.close();
      expect((await held).map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual(
        Array(3).fill('the extraction pool is closed'),
      );
    });
  });

  it('a worker started on the sources transpiles a file once: the next loads it with no compiler', async () => {
    // What a worker on `file` exports, and whether it loaded the TypeScript compiler to get it.
    const load = (file: string) =>
      new Promise<{ value: unknown; compiler: boolean }>((resolve, reject) => {
        const w = new Worker(
          `const { parentPort, workerData } = require('node:worker_threads');
          ${TYPESCRIPT_SOURCES}
          const { value } = require(workerData.file);
          const compiler = Object.keys(require.cache).some((f) => f.includes('/node_modules/typescript/'));
          parentPort.postMessage({ value, compiler });`,
          { eval: true, workerData: { file } },
        );
        w.once(
          'message',
          (m: { value: unknown; compiler: boolean }) => void w.terminate().then(() => resolve(m)),
        );
        w.once('error', reject);
      });
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-ts-')), 'value.ts');
    const nonce = `${process.pid}-${Date.now()}-${Math.random()}`;
    fs.writeFileSync(file, `export const value: string = ${JSON.stringify(nonce)};\n`);
    expect(await load(file)).toEqual({ value: nonce, compiler: true });
    expect(await load(file)).toEqual({ value: nonce, compiler: false });
    // A changed file is transpiled again: no worker runs what the file no longer says.
    fs.writeFileSync(file, `export const value: string = ${JSON.stringify(`${nonce} changed`)};\n`);
    expect(await load(file)).toEqual({ value: `${nonce} changed`, compiler: true });
    // The extractor itself, as the pools of every suite load it: no compiler after the first.
    const extractor = require.resolve('../../src/extract/extract');
    await load(extractor);
    const again = await load(extractor);
    expect(again.compiler).toBe(false);
  });

  it('each worker runs with an 8 MB young generation and the configured heap limit', async () => {
    // bench/batch: 16 MB cost about 10 MB of resident memory per worker and no measurable time.
    const module = path.join(__dirname, '..', 'fixtures', 'limits-extract.ts');
    const pool = new ExtractPool({ size: 1, heapMb: 100, module });
    const limits = JSON.parse((await pool.extract('<p>x</p>', 'http://x.test/', 'text')).content);
    expect(limits).toMatchObject({ maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 100 });
    await pool.close();
  });

  it('a page waiting for a worker that still loads holds the process open until it is extracted', async () => {
    // Nothing else keeps this script's process alive: an idle pool must not, a pending page must.
    ensureBuilt();
    const module = path.join(__dirname, '..', 'fixtures', 'slow-load-extract.ts');
    const script = `
      const { ExtractPool } = require('./dist/src/extract/extract-pool.js');
      const pool = new ExtractPool({ size: 1, module: ${JSON.stringify(module)} });
      pool.extract('<p>x</p>', 'http://x.test/', 'text').then(async (r) => {
        process.stdout.write(r.content);
        await pool.close();
      });`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: ROOT });
    expect(stdout).toBe('loaded');
  });

  it("launched as make run launches sift, the main thread's young generation is 16 MB and a worker's stays 8", async () => {
    // V8 gives every heap it creates the launch flag's young generation, a worker's own limits
    // notwithstanding: the pool clears the flag before it starts its workers.
    ensureBuilt();
    const module = path.join(__dirname, '..', 'fixtures', 'young-extract.ts');
    const script = `
      const v8 = require('node:v8');
      const { ExtractPool } = require('./dist/src/extract/extract-pool.js');
      const pool = new ExtractPool({ size: 1, module: ${JSON.stringify(module)}, heapMb: 384 });
      let keep = [], main = 0;
      for (let i = 0; i < 2e6; i++) {
        keep.push({ i, s: 'x' + i });
        if (keep.length > 50000) keep = [];
        if (i % 1000 === 0) main = Math.max(main, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
      }
      pool.extract('<p>x</p>', 'http://x.test/', 'text').then(
        async (r) => {
          process.stdout.write(JSON.stringify({ main: main / 1048576, worker: Number(r.content) - 384 }));
          await pool.close();
        },
        (err) => {
          process.stderr.write(String(err && err.stack || err));
          process.exit(3);
        },
      );`;
    const { stdout } = await promisify(execFile)(process.execPath, [...NODE_FLAGS, '-e', script], {
      cwd: ROOT,
    });
    const { main, worker } = JSON.parse(stdout) as { main: number; worker: number };
    // The main thread's new space, as used: two semi-spaces of the flag's 8 MB. Node 20 reports
    // 16; Node 24 16 to 21. Without the flag both reach 32 or more.
    expect(main).toBeGreaterThanOrEqual(16);
    expect(main).toBeLessThan(32);
    // A worker's reservation for an 8 MB young generation is 12 MB on Node 20 and 24; one that took
    // the launch flag reserves 24 (three semi-spaces of 8 MB).
    expect(worker).toBeGreaterThanOrEqual(8);
    expect(worker).toBeLessThan(16);
  });
});
