import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LoggerService } from '@nestjs/common';
import request from 'supertest';
import { processTree } from '../../src/render/chromium-process';
import { Renderer } from '../../src/render/renderer';
import { createTestApp, fleet } from '../support/app';
import { Fixture, html, send } from '../support/fixture';
import { browserProcess, CHROMIUM, failure, renderOf, testRenderer } from '../support/render';
import { waitUntil } from '../support/wait';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * A page that allocates 2.5 GiB in script before it has loaded: 32 MiB at a time, written
 * through, and never faster than one block per 64 ms (at most 0.5 GiB/s, whatever the machine).
 */
const HOG = `const keep = []; const t0 = Date.now();
for (let i = 0; i < 80; i++) {
  const block = new Uint8Array(32 << 20); block.fill(1); keep.push(block);
  while (Date.now() < t0 + (i + 1) * 64);
}
document.body.insertAdjacentHTML('beforeend', '<p>allocated ' + keep.length * 32 + ' MiB</p>');`;

/** Chromium's processes' proportional set sizes together, read by the test off its main thread. */
async function pss(root: number): Promise<number> {
  const each = await Promise.all(
    processTree(root).map((pid) =>
      fs.promises
        .readFile(`/proc/${pid}/smaps_rollup`, 'utf8')
        .then((t) => Number(/^Pss:\s+(\d+) kB/m.exec(t)?.[1] ?? 0) * 1024)
        .catch(() => 0),
    ),
  );
  return each.reduce((a, b) => a + b, 0);
}

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`);
const status = (pid: number, key: string) =>
  new RegExp(`^${key}:\\s*(.*)$`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
/** A process's command line (a zygote's children rewrite theirs as one string). */
const cmdline = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
const ns = (pid: number, kind: 'user' | 'pid') => fs.readlinkSync(`/proc/${pid}/ns/${kind}`);

/** Who Chromium should run as: sift's own user, or nobody (from /etc/passwd) when sift is root. */
function expectedUid(): number {
  if (process.getuid!() !== 0) return process.getuid!();
  const nobody = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  return Number(nobody?.split(':')[2] ?? 65534);
}

describe('Chromium bounded and sandboxed', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({
      '/plain': send(200, 'text/html', html('<p>a plain page</p>')),
      '/hog': send(200, 'text/html', html(`<p>a hungry page</p><script>${HOG}</script>`)),
      // Never done loading: its script is never answered.
      '/stuck': send(200, 'text/html', html('<p>loading</p><script src="/hang.js"></script>')),
      '/hang.js': () => undefined,
    }).start('127.0.0.7');
  });
  afterAll(() => fx.stop());

  /** A render of /stuck, in flight until `stop` is aborted, and the browser's processes then. */
  async function stuck(r: Renderer): Promise<{ pids: number[]; done: Promise<unknown>; stop: () => void }> {
    const hits = fx.hitCount('/hang.js');
    const ac = new AbortController();
    const done = failure(r.render(renderOf(fx.url('/stuck'), { timeoutMs: 60_000, signal: ac.signal })));
    await waitUntil(
      () => (fx.hitCount('/hang.js') > hits ? true : undefined),
      'the page to load its script',
      30_000,
    );
    const pids = r.processes();
    return { pids, done, stop: () => ac.abort(new Error('done')) };
  }

  it('a page that takes the browser over SIFT_RENDER_MAX_MEMORY ends render_too_costly, with every render on that browser, and the browser is replaced', async () => {
    const log: string[] = [];
    const r = testRenderer({ maxMemory: GiB, log: (m) => log.push(m) });
    let sampling = true;
    let peak = 0;
    try {
      expect((await r.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      const other = await stuck(r);
      const root = other.pids[0];
      // The test's own reading of the browser's memory, every 100 ms until the test has seen enough.
      const sampler = waitUntil(
        async () => {
          peak = Math.max(peak, await pss(root));
          return sampling ? undefined : true;
        },
        'the end of the memory readings',
        120_000,
        100,
      );
      const hog = await failure(r.render(renderOf(fx.url('/hog'), { timeoutMs: 60_000 })));
      expect(hog).toMatchObject({ code: 'render_too_costly', status: 502 });
      expect(hog.message).toContain('SIFT_RENDER_MAX_MEMORY');
      // The other render in flight on that browser ends with it.
      expect(await other.done).toMatchObject({ code: 'render_too_costly' });
      await waitUntil(
        () => (other.pids.every((p) => !alive(p)) ? true : undefined),
        () => `the browser to be killed: ${other.pids.filter(alive).join(' ')} left`,
        10_000,
      );
      sampling = false;
      await sampler;
      // The page got near the limit (or this proves nothing), and never far past it. It grows at
      // most 0.5 GiB/s; the browser is read every 200 ms (a reading ~20 ms) and killed at once on
      // one over: ~0.1 GiB past the limit. 512 MiB leaves room for a reading late by over half a
      // second while both cores are busy. Unbounded, the page takes it to 2.7 GiB.
      expect(peak).toBeGreaterThan(0.75 * GiB);
      expect(peak).toBeLessThan(GiB + 512 * MiB);
      expect(log.join('\n')).toMatch(/over SIFT_RENDER_MAX_MEMORY \(1024 MiB\)/);
      // The next render launches a fresh browser.
      expect((await r.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      expect(r.processes()[0]).not.toBe(root);
    } finally {
      sampling = false;
      await r.close();
    }
  }, 120_000);

  it('gives every Chromium process oom_score_adj 1000, and leaves sift its own', async () => {
    const own = fs.readFileSync('/proc/self/oom_score_adj', 'utf8').trim();
    const r = testRenderer();
    try {
      const { pids, done, stop } = await stuck(r);
      expect(pids.filter((p) => cmdline(p).includes('--type=renderer')).length).toBeGreaterThanOrEqual(1);
      const scores = pids.map((p) => fs.readFileSync(`/proc/${p}/oom_score_adj`, 'utf8').trim());
      expect(scores).toEqual(pids.map(() => '1000'));
      expect(fs.readFileSync('/proc/self/oom_score_adj', 'utf8').trim()).toBe(own);
      stop();
      await done;
    } finally {
      await r.close();
    }
  }, 60_000);

  it('runs Chromium with its sandbox, as an unprivileged user when sift is root; SIFT_CHROMIUM_NO_SANDBOX turns the sandbox off', async () => {
    const uid = expectedUid();
    const r = testRenderer();
    const bare = testRenderer({ noSandbox: true });
    try {
      const { pids, done, stop } = await stuck(r);
      // Every process but the launcher, which holds the PID namespace: real, effective, saved and
      // file-system uid.
      for (const p of pids.slice(1))
        expect([p, status(p, 'Uid')]).toEqual([p, `${uid}\t${uid}\t${uid}\t${uid}`]);
      const browser = browserProcess(pids);
      expect(cmdline(browser)).not.toContain('--no-sandbox');
      const renderers = pids.filter((p) => cmdline(p).includes('--type=renderer'));
      expect(renderers.length).toBeGreaterThanOrEqual(1);
      for (const p of renderers) {
        // Seccomp-BPF filtering, no new privileges, and namespaces of its own.
        expect([status(p, 'Seccomp'), status(p, 'NoNewPrivs')]).toEqual(['2', '1']);
        expect(ns(p, 'user')).not.toBe(ns(process.pid, 'user'));
        expect(ns(p, 'pid')).not.toBe(ns(process.pid, 'pid'));
        expect(ns(p, 'pid')).not.toBe(ns(browser, 'pid'));
      }
      stop();
      await done;

      const without = await stuck(bare);
      const browserWithout = browserProcess(without.pids);
      expect(cmdline(browserWithout)).toContain('--no-sandbox');
      expect(status(browserWithout, 'Uid')).toBe(`${uid}\t${uid}\t${uid}\t${uid}`);
      without.stop();
      await without.done;
    } finally {
      await Promise.all([r.close(), bare.close()]);
    }
  }, 60_000);

  it('SIFT_CHROMIUM_NO_SANDBOX=1: sift warns once at start-up, and its browser runs without the sandbox', async () => {
    const warnings: string[] = [];
    const logger: LoggerService = {
      log: () => undefined,
      error: () => undefined,
      warn: (m: unknown) => void warnings.push(String(m)),
    };
    const { app } = await createTestApp(
      { SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_CHROMIUM_NO_SANDBOX: '1' },
      { logger },
    );
    try {
      expect(warnings.filter((w) => w.includes('SIFT_CHROMIUM_NO_SANDBOX'))).toHaveLength(1);
      const r = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/plain'), render: 'always', format: 'html' });
      expect(r.status).toBe(200);
      expect(r.body.rendered).toBe(true);
      expect(cmdline(browserProcess(app.get(Renderer).processes()))).toContain('--no-sandbox');
      expect(warnings.filter((w) => w.includes('SIFT_CHROMIUM_NO_SANDBOX'))).toHaveLength(1);
    } finally {
      await app.close();
    }
  }, 60_000);

  it('says so when the sandbox will not start, and names SIFT_CHROMIUM_NO_SANDBOX', async () => {
    // Chromium that finds itself root (in a user namespace of its own) refuses to start its sandbox.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-test-'));
    fs.chmodSync(dir, 0o755);
    const asRoot = path.join(dir, 'chromium-as-root');
    fs.writeFileSync(asRoot, `#!/bin/sh\nexec unshare --user --map-root-user '${CHROMIUM}' "$@"\n`, {
      mode: 0o755,
    });
    const r = testRenderer({ chromiumPath: asRoot });
    try {
      const err = (await r.render(renderOf(fx.url('/plain'))).catch((e: unknown) => e)) as {
        code: string;
        message: string;
        hint: string;
      };
      expect(err.code).toBe('render_unavailable');
      expect(err.message).toMatch(/sandbox would not start \(Running as root without --no-sandbox/);
      expect(err.message).toContain('SIFT_CHROMIUM_NO_SANDBOX=1');
      expect(err.hint).toContain('SIFT_CHROMIUM_NO_SANDBOX=1');
    } finally {
      await r.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
