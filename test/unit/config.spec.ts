import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { type AppConfig, ConfigError, loadConfig } from '../../src/config/app-config';
import { CHROMIUM_PATHS, SCHEMA } from '../../src/config/env.schema';
import { firstExecutable } from '../../src/config/parsers';
import type { Knob } from '../../src/config/knob';
import { SIFT_VERSION } from '../../src/common/version';

const ROOT = path.join(__dirname, '..', '..');

/** Every knob with where AppConfig holds it: `port`, `limits.fleet.maxTargets`… */
const KNOBS = Object.entries(SCHEMA).flatMap(([section, knobs]) =>
  Object.entries(knobs).map(([name, knob]) => ({
    knob: knob as Knob,
    where: section.startsWith('limits.') ? `${section}.${name}` : name,
  })),
);

/** AppConfig as a map from each knob's place to its value. */
const placed = (c: AppConfig): Map<string, unknown> =>
  new Map(
    KNOBS.map(({ where }) => [
      where,
      where.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], c),
    ]),
  );

/** A valid value other than the default, for the knobs that are not whole numbers. */
const SAMPLES: Record<string, string> = {
  SIFT_HOST: '127.0.0.2',
  SIFT_LOG_LEVEL: 'debug',
  SIFT_TOKENS: 'aaaaaaaaaa:alice:fleet',
  SIFT_METRICS_TOKEN: 'metrics-token-0123456789abcdef',
  SIFT_DB: './data/other.db',
  SIFT_DATABASE_URL: 'postgres://sift@db.test/sift',
  SIFT_WEBHOOK_RETRY_S: '1,2',
  SIFT_FLEET_ALLOW: '10.0.0.0/8',
  SIFT_USER_AGENT: 'probe/1.0',
  SIFT_ROBOTS_AGENT: 'probebot',
  SIFT_PROXIES: 'office=http://10.0.0.5:8888',
  SIFT_SECRET_KEY: 'a1'.repeat(32),
  SIFT_FLEET_PROXIES: 'none',
  SIFT_RESTRICTED_PROXIES: '*',
};

describe('SIFT_CHROMIUM_PATH', () => {
  it('takes the first executable file of a `:` list, and the list as given when none is', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-chromium-list-'));
    const plain = path.join(dir, 'plain');
    const runnable = path.join(dir, 'runnable');
    fs.writeFileSync(plain, '');
    fs.writeFileSync(runnable, '#!/bin/sh\n', { mode: 0o755 });
    try {
      expect(firstExecutable(`${dir}/missing:${plain}:${dir}:${runnable}`)).toBe(runnable);
      expect(firstExecutable(`${dir}/missing:${plain}`)).toBe(`${dir}/missing:${plain}`);
      expect(loadConfig({ SIFT_CHROMIUM_PATH: `${plain}:${runnable}` }).chromiumPath).toBe(runnable);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("looks for Debian's headless shell first, then its full browser", () => {
    expect(CHROMIUM_PATHS).toBe('/usr/bin/chromium-headless-shell:/usr/bin/chromium');
    expect(CHROMIUM_PATHS.split(':')).toContain(loadConfig({}).chromiumPath);
  });
});

describe('config', () => {
  it('has working defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8080, dbPath: './data/sift.db', batchTtlS: 86400, idemTtlS: 86400 });
    expect(c.limits.fleet).toEqual({
      maxTargets: 10000,
      maxLiveJobs: 32,
      outputCap: 2 * 1024 * 1024,
      fetchConcurrency: 64,
      maxStreams: 32,
      renderConcurrency: 4,
      proxies: '*',
      monitors: 100,
      monitorMinIntervalS: 60,
    });
    expect(c.limits.restricted).toEqual({
      maxTargets: 1000,
      maxLiveJobs: 4,
      outputCap: 256 * 1024,
      fetchConcurrency: 8,
      maxStreams: 4,
      renderConcurrency: 1,
      proxies: [],
      monitors: 5,
      monitorMinIntervalS: 900,
    });
    expect(c).toMatchObject({
      host: '127.0.0.1',
      extractQueue: 256,
      dnsTimeoutMs: 5000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
    });
    expect(c.maxLiveJobs).toBe(256);
    expect(c).toMatchObject({
      renderPages: 2,
      renderRecycleAfter: 200,
      renderMaxMemory: 1024 ** 3,
    });
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['SIFT_BATCH_TTL_S', '-1'],
    ['SIFT_RUNNER_CONCURRENCY', '1.5'],
    ['SIFT_CACHE_MAX_BYTES', 'lots'],
  ])('rejects %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('parses tokens and rejects malformed ones without echoing the secret', () => {
    const c = loadConfig({ SIFT_TOKENS: 'aaaaaaaaaa:alice:fleet, bbbbbbbbbb:bob:restricted' });
    expect(c.tokens).toEqual([
      { token: 'aaaaaaaaaa', caller: 'alice', callerClass: 'fleet' },
      { token: 'bbbbbbbbbb', caller: 'bob', callerClass: 'restricted' },
    ]);
    expect(() => loadConfig({ SIFT_TOKENS: 'secretsecret:alice:admin' })).toThrow(/SIFT_TOKENS/);
    try {
      loadConfig({ SIFT_TOKENS: 'secretsecret:alice:admin' });
    } catch (e) {
      expect((e as Error).message).not.toContain('secretsecret');
    }
  });

  it('refuses a SIFT_METRICS_TOKEN under 24 characters or with a space, without echoing it', () => {
    for (const bad of ['short-secret-1234', 'a metrics token with spaces']) {
      expect(() => loadConfig({ SIFT_METRICS_TOKEN: bad })).toThrow(/SIFT_METRICS_TOKEN/);
      expect(() => loadConfig({ SIFT_METRICS_TOKEN: bad })).not.toThrow(bad);
    }
    expect(loadConfig({}).metricsToken).toBeUndefined();
  });

  it('parses SIFT_FLEET_ALLOW CIDRs and names the variable on a bad one', () => {
    expect(loadConfig({ SIFT_FLEET_ALLOW: '10.0.0.0/8,fd00::/8' }).fleetAllow).toHaveLength(2);
    // A bare address is that one address.
    const [v4, v6] = loadConfig({ SIFT_FLEET_ALLOW: '127.0.0.1, ::1' }).fleetAllow;
    expect([v4[0].toString(), v4[1], v6[0].toString(), v6[1]]).toEqual(['127.0.0.1', 32, '::1', 128]);
    expect(() => loadConfig({ SIFT_FLEET_ALLOW: '127.0.0.300' })).toThrow(/SIFT_FLEET_ALLOW/);
    expect(() => loadConfig({ SIFT_FLEET_ALLOW: '10.0.0.0/33' })).toThrow(/SIFT_FLEET_ALLOW/);
  });

  it('.env.example lists every variable with the same defaults as the code', () => {
    const text = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');
    const env: Record<string, string> = {};
    for (const line of text.split('\n')) {
      const m = /^([A-Z_0-9]+)=(.*)$/.exec(line);
      if (m) env[m[1]] = m[2];
    }
    const fromFile = loadConfig(env);
    const fromDefaults = loadConfig({ SIFT_TOKENS: env.SIFT_TOKENS });
    expect({ ...fromFile, userAgent: '' }).toEqual({ ...fromDefaults, userAgent: '' });
    expect(fromFile.tokens[0]).toMatchObject({ caller: 'dev', callerClass: 'fleet' });
  });

  it('SIFT_USER_AGENT is sift/<the version of package.json> by default', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(SIFT_VERSION).toBe(pkg.version);
    expect(loadConfig({}).userAgent).toBe(`sift/${pkg.version}`);
  });

  it('webhook retry delays are whole seconds of at least 1', () => {
    expect(loadConfig({ SIFT_WEBHOOK_RETRY_S: '1,2,3' }).webhookRetryS).toEqual([1, 2, 3]);
    for (const bad of ['0', '5,0', '5,,30', 'soon', '-1'])
      expect(() => loadConfig({ SIFT_WEBHOOK_RETRY_S: bad })).toThrow(/SIFT_WEBHOOK_RETRY_S/);
  });

  it('the schema names each variable and each place in AppConfig once', () => {
    const envs = KNOBS.map((k) => k.knob.env);
    const places = KNOBS.map((k) => k.where);
    expect(envs.filter((e, i) => envs.indexOf(e) !== i)).toEqual([]);
    expect(places.filter((p, i) => places.indexOf(p) !== i)).toEqual([]);
    expect(Object.keys(SAMPLES).filter((e) => !envs.includes(e))).toEqual([]);
  });

  it.each(KNOBS.map((k) => [k.knob.env, k.where, k.knob] as const))(
    '%s sets AppConfig.%s, and nothing else',
    (env, where, knob) => {
      const value = SAMPLES[env] ?? String(Number(knob.default) + 1);
      const before = placed(loadConfig({}));
      const after = placed(loadConfig({ [env]: value }));
      const changed = [...after].filter(([k, v]) => !isDeepStrictEqual(v, before.get(k))).map(([k]) => k);
      expect(changed).toEqual([where]);
      if (knob.numeric && where !== 'extractWorkers') expect(after.get(where)).toBe(Number(value));
    },
  );

  // A knob no suite turns may stop working unseen: it gets a test there, or becomes a constant.
  it('every knob is set by a suite of the running app (test/e2e, test/medium), not only here', () => {
    const suites = ['test/e2e', 'test/medium'].flatMap((dir) =>
      fs
        .readdirSync(path.join(ROOT, dir))
        .filter((f) => f.endsWith('.spec.ts'))
        .map((f) => fs.readFileSync(path.join(ROOT, dir, f), 'utf8')),
    );
    const untested = KNOBS.map((k) => k.knob.env).filter(
      (env) => !suites.some((text) => new RegExp(`\\b${env}\\b'?\\s*:`).test(text)),
    );
    expect(untested).toEqual([]);
  });
});
