import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { killTree } from '../../src/render/chromium-process';
import { processRuns, ROOT } from '../support/process';
import { Fixture, html, send } from '../support/fixture';
import { browserProcess, failure, renderOf, testRenderer } from '../support/render';
import { waitUntil } from '../support/wait';

/** The PID namespace of a process, or undefined once it has gone. */
function pidNamespace(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/** Every process on the machine in one of these PID namespaces. */
function processesIn(namespaces: Set<string>): number[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => namespaces.has(pidNamespace(pid) ?? '') && processRuns(pid));
}

describe('no Chromium process outlives sift', () => {
  it('a SIGKILLed process that was rendering leaves no process of its Chromium 5 s later', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'test', 'fixtures', 'render-child.js')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    let pids: number[] = [];
    try {
      await waitUntil(
        () => out.includes('\n') || undefined,
        () => `the child to render: ${err.slice(-2000)}`,
        90_000,
      );
      pids = (JSON.parse(out) as { pids: number[] }).pids;
      // The launcher, Chromium, its zygotes, renderers, GPU and network processes.
      const cmdlines = pids.map((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8'));
      expect(cmdlines.filter((c) => c.includes('--type=renderer')).length).toBeGreaterThanOrEqual(2);
      // A browser too busy to notice that sift has gone (stopped here): it must go all the same,
      // with every child of its own. Without the launcher's PID namespace and parent-death
      // signal, all of them stay (Chromium alone ends only when it reads the end of its pipe).
      process.kill(browserProcess(pids), 'SIGSTOP');
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    const own = pidNamespace(process.pid);
    const namespaces = new Set(pids.map(pidNamespace).filter((ns): ns is string => !!ns && ns !== own));
    // Within 5 s: every process it had, and any other in its PID namespace, has gone.
    const left = () => [...pids.filter(processRuns), ...processesIn(namespaces)];
    try {
      await waitUntil(
        () => (left().length === 0 ? true : undefined),
        () => `these to go: ${left().join(' ')}`,
        5000,
      );
    } finally {
      for (const p of left()) process.kill(p, 'SIGKILL');
    }
  }, 120_000);
});

describe('the browser recovers', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({
      '/plain': send(200, 'text/html', html('<p>a plain page</p>')),
      // Never done loading: its script never answers.
      '/loading': send(200, 'text/html', html('<p>loading</p><script src="/hang.js"></script>')),
      '/hang.js': () => undefined,
    }).start();
  });
  afterAll(() => fx.stop());

  it('is launched again on the next render after it crashed', async () => {
    const r = testRenderer();
    try {
      expect((await r.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      const before = r.processes();
      // Chromium's browser process (the launcher's child) dies.
      process.kill(browserProcess(before), 'SIGKILL');
      await waitUntil(
        () => (before.every((p) => !processRuns(p)) ? true : undefined),
        'the old browser to go',
        10_000,
      );
      expect((await r.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      expect(r.processes()[0]).not.toBe(before[0]);
    } finally {
      await r.close();
    }
  }, 60_000);

  it('is launched again for a render asked for the moment it died, before the driver noticed', async () => {
    const r = testRenderer();
    try {
      expect((await r.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      const before = r.processes();
      // In the same turn of the event loop: the driver has not yet read the end of its pipe.
      killTree(before[0]);
      expect((await r.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      expect(r.processes()[0]).not.toBe(before[0]);
    } finally {
      await r.close();
    }
  }, 60_000);

  it('is replaced after SIFT_RENDER_RECYCLE_AFTER renders, the old one ended', async () => {
    const r = testRenderer({ recycleAfter: 2 });
    try {
      await r.render(renderOf(fx.url('/plain')));
      const first = r.processes();
      await r.render(renderOf(fx.url('/plain')));
      await waitUntil(
        () => (first.every((p) => !processRuns(p)) ? true : undefined),
        'the old browser to end',
        10_000,
      );
      await r.render(renderOf(fx.url('/plain')));
      expect(r.processes()[0]).not.toBe(first[0]);
    } finally {
      await r.close();
    }
    expect(r.processes()).toEqual([]);
  }, 60_000);

  it('is replaced once its processes use more memory than allowed', async () => {
    const log: string[] = [];
    const r = testRenderer({ maxMemory: 1024 * 1024, log: (m) => log.push(m) });
    const outcome = (p: Promise<{ html: string }>) =>
      p.then(
        (x) => x.html,
        (e: { code?: string }) => e.code,
      );
    try {
      const during = outcome(r.render(renderOf(fx.url('/plain'))));
      await waitUntil(() => (r.processes().length > 2 ? true : undefined), 'the browser to start', 30_000);
      const first = r.processes();
      // Over the limit when read during the render (which then ends render_too_costly), or once
      // its context, its last, has closed behind the answer: either way no browser is current,
      // the old one ended.
      expect(await during).toMatch(/a plain page|^render_too_costly$/);
      await waitUntil(
        () => (r.processes().length === 0 && first.every((p) => !processRuns(p)) ? true : undefined),
        () => `the old browser to end (current: ${r.processes().join(' ')})`,
        10_000,
      );
      // The next render launches another.
      expect(await outcome(r.render(renderOf(fx.url('/plain'))))).toMatch(/a plain page|^render_too_costly$/);
      const started = log.filter((m) => m.startsWith('Chromium started'));
      expect(started).toHaveLength(2);
      expect(started[1]).not.toBe(started[0]);
    } finally {
      await r.close();
    }
  }, 60_000);

  it('is killed with all its processes when a context will not close in 5 s, and launched again', async () => {
    const log: string[] = [];
    const r = testRenderer({ log: (m) => log.push(m) });
    let before: number[] = [];
    try {
      await r.render(renderOf(fx.url('/plain')));
      before = r.processes();
      const during = failure(r.render(renderOf(fx.url('/loading'), { timeoutMs: 1500 })));
      await waitUntil(
        () => (fx.hitCount('/hang.js') > 0 ? true : undefined),
        'the page to load its script',
        10_000,
      );
      // A browser that answers nothing (stopped): the render ends at its deadline, and closing its
      // context never completes. Without the 5 s rule the stopped processes stay for good.
      process.kill(browserProcess(before), 'SIGSTOP');
      expect(await during).toMatchObject({ code: 'timeout' });
      await waitUntil(
        () => (before.every((p) => !processRuns(p)) ? true : undefined),
        () => `the stopped browser to be killed: ${before.filter(processRuns).join(' ')} left`,
        15_000,
      );
      expect(log.join('\n')).toMatch(/did not close in 5000 ms: Chromium is killed/);
      expect((await r.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      expect(r.processes()[0]).not.toBe(before[0]);
    } finally {
      for (const p of before.filter(processRuns)) process.kill(p, 'SIGKILL');
      await r.close();
    }
  }, 60_000);
});

/**
 * The launch folder of a renderer's current browser (Chromium's own folder is in it, named in its
 * command line) and the driver's profile folder it noted.
 */
function foldersOf(pids: number[]): { launch: string; profile: string } {
  const argv = fs.readFileSync(`/proc/${pids[0]}/cmdline`, 'utf8').split('\0');
  const data = argv.find((a) => a.startsWith('--user-data-dir='))!.slice('--user-data-dir='.length);
  const launch = path.dirname(data);
  expect(path.basename(launch)).toMatch(/^sift-chromium-/);
  return { launch, profile: fs.readFileSync(path.join(launch, 'profile'), 'utf8') };
}

describe('what the browsers of killed processes left', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({ '/plain': send(200, 'text/html', html('<p>a plain page</p>')) }).start();
  });
  afterAll(() => fx.stop());

  it("is removed at the next launch; a running browser's folders are not", async () => {
    // What a SIGKILLed process leaves: its launch folder, naming a launcher that has gone, and
    // Chromium's profile folder.
    const gone = spawnSync('true').pid!;
    const launch = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-chromium-'));
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'playwright_chromiumdev_profile-'));
    fs.writeFileSync(path.join(launch, 'pid'), `${gone}\n`);
    fs.writeFileSync(path.join(launch, 'profile'), profile);
    fs.writeFileSync(path.join(profile, 'Local State'), '{}');
    // A link planted under the prefix, to a folder naming the same kind of leftovers: left alone.
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-elsewhere-'));
    const planted = `${fs.mkdtempSync(path.join(os.tmpdir(), 'sift-chromium-'))}-link`;
    fs.writeFileSync(path.join(elsewhere, 'pid'), `${gone}\n`);
    fs.writeFileSync(path.join(elsewhere, 'profile'), profile);
    fs.symlinkSync(elsewhere, planted);
    const a = testRenderer();
    const b = testRenderer();
    let own: { launch: string; profile: string } | undefined;
    try {
      expect((await a.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      expect([fs.existsSync(launch), fs.existsSync(profile)]).toEqual([false, false]);
      expect([fs.lstatSync(planted).isSymbolicLink(), fs.existsSync(path.join(elsewhere, 'pid'))]).toEqual([
        true,
        true,
      ]);
      own = foldersOf(a.processes());
      // Another instance's launch sweeps too, and leaves a live browser's folders alone.
      expect((await b.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
      expect([fs.existsSync(own.launch), fs.existsSync(own.profile)]).toEqual([true, true]);
      expect((await a.render(renderOf(fx.url('/plain')))).html).toContain('a plain page');
    } finally {
      await Promise.all([a.close(), b.close()]);
      for (const p of [launch, profile, elsewhere, planted, planted.slice(0, -'-link'.length)])
        fs.rmSync(p, { recursive: true, force: true });
    }
    // Closed: nothing of its own is left either.
    expect([fs.existsSync(own.launch), fs.existsSync(own.profile)]).toEqual([false, false]);
  }, 60_000);
});

describe('an instance that never renders', () => {
  it('does not load the browser driver (about 75 MB), and its process ends once the app is closed', () => {
    // The build (dist/, as `make test` leaves it) in a process of its own, closed with nothing in
    // flight and a shutdown grace of 60 s: it ends well before that grace would.
    const r = spawnSync(process.execPath, [path.join(ROOT, 'test', 'fixtures', 'no-render-child.js')], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.error).toBeUndefined();
    expect(r.stderr.slice(-2000)).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ status: 200, rendered: false, driverLoaded: false });
  }, 120_000);
});
