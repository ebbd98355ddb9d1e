import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { SIFT_VERSION } from '../common/version';
import { int, text } from './knob';
import { DOCUMENT_KNOBS, RENDER_KNOBS } from './media-knobs';
import { MONITOR_KNOBS } from './monitor-knobs';
import { FLEET_LIMITS, RESTRICTED_LIMITS } from './class-knobs';
import { ConfigError, parseCidrs, parseProxies, parseTokens } from './parsers';

export { CHROMIUM_PATHS } from './media-knobs';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/**
 * Every environment variable sift reads, once: by section, each with its default, its rules and
 * one line of meaning, under the name of the AppConfig property it becomes. A section's knobs are
 * AppConfig's own properties, but those of `limits.<class>`, which are `AppConfig.limits[class]`.
 * .env.example and the table in docs/configuration.md are generated from this (config-docs.ts).
 */
export const SCHEMA = {
  server: {
    port: int({ env: 'PORT', default: 8080, min: 0, max: 65535 }, 'HTTP port'),
    host: text(
      { env: 'SIFT_HOST', default: '127.0.0.1', rules: [IsString(), MinLength(1)] },
      'bind address; beyond loopback (e.g. `0.0.0.0`) only with tokens of 24+ characters',
    ),
    headersTimeoutMs: int(
      { env: 'SIFT_HEADERS_TIMEOUT_MS', default: 10_000, min: 100, max: 600_000 },
      "a request's headers must arrive within this (else 408)",
    ),
    requestTimeoutMs: int(
      { env: 'SIFT_REQUEST_TIMEOUT_MS', default: 60_000, min: 100, max: 3_600_000 },
      "a request's whole body must arrive within this (else 408); at least SIFT_HEADERS_TIMEOUT_MS",
    ),
    shutdownGraceMs: int(
      { env: 'SIFT_SHUTDOWN_GRACE_MS', default: 10_000, min: 0, max: 600_000 },
      'on SIGTERM, how long targets in flight may take to finish before they go back to pending',
    ),
    logLevel: text(
      { env: 'SIFT_LOG_LEVEL', default: 'info', rules: [IsIn(['fatal', 'error', 'warn', 'info', 'debug'])] },
      '`fatal`, `error`, `warn`, `info` or `debug`',
    ),
  },
  callers: {
    tokens: text(
      {
        env: 'SIFT_TOKENS',
        default: '',
        example: {
          value: 'dev-token:dev:fleet',
          note:
            'A development token, for trying sift on this machine: replace it before exposing sift ' +
            '(`node dist/src/cli.js token create CALLER --class restricted`).',
        },
        read: parseTokens,
      },
      '`token:caller:class`, comma separated; class `fleet` or `restricted`',
    ),
    metricsToken: text(
      {
        env: 'SIFT_METRICS_TOKEN',
        default: undefined,
        rules: [IsOptional(), IsString()],
        // Checked here, not by a rule: a rule's message would show the secret.
        read: (v: string | undefined) => {
          if (v !== undefined && !/^\S{24,}$/.test(v))
            throw new ConfigError('SIFT_METRICS_TOKEN must be 24 or more characters, none of them spaces');
          return v;
        },
      },
      'a token (24+ characters) that opens `/metrics` beyond loopback, besides any fleet token; ' +
        'loopback scrapes need none',
    ),
  },
  database: {
    dbPath: text(
      { env: 'SIFT_DB', default: './data/sift.db', rules: [IsString(), MinLength(1)] },
      'the SQLite file (its folder is created)',
    ),
    databaseUrl: text(
      {
        env: 'SIFT_DATABASE_URL',
        default: undefined,
        rules: [
          IsOptional(),
          Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'SIFT_DATABASE_URL must be a postgres:// URL' }),
        ],
        example: { value: 'postgres://sift@db.internal/sift' },
        read: (v: string | undefined) => v || undefined,
      },
      '`postgres://…`: state in this PostgreSQL database, shared by every instance, instead of SIFT_DB',
    ),
    dbTimeoutMs: int(
      { env: 'SIFT_DB_TIMEOUT_MS', default: 5000, min: 100, max: 600_000 },
      'PostgreSQL: the longest a request waits for the database before 503 `storage_unavailable`; ' +
        "also each statement's, lock wait's and idle transaction's limit on the server",
    ),
    dbWaitS: int(
      { env: 'SIFT_DB_WAIT_S', default: 60, min: 0, max: 3600 },
      'PostgreSQL: how long (s) start-up waits for the database to answer before it exits 1',
    ),
  },
  cluster: {
    heartbeatS: int(
      { env: 'SIFT_HEARTBEAT_S', default: 2, min: 1, max: 60 },
      "PostgreSQL: seconds between an instance's heartbeats",
    ),
    instanceTtlS: int(
      { env: 'SIFT_INSTANCE_TTL_S', default: 10, min: 2, max: 3600 },
      'PostgreSQL: an instance silent this long (s) is lost, and its targets are recovered',
    ),
  },
  storage: {
    cacheMaxBytes: int(
      { env: 'SIFT_CACHE_MAX_BYTES', default: 256 * MiB, min: 0, bytes: true },
      'page cache budget in bytes (bodies, metadata and links), least recently used pages evicted first',
    ),
    batchMaxBytes: int(
      { env: 'SIFT_BATCH_MAX_BYTES', default: GiB, min: 0, bytes: true },
      'stored batch results budget in bytes, oldest finished jobs evicted whole',
    ),
  },
  batch: {
    batchTtlS: int(
      { env: 'SIFT_BATCH_TTL_S', default: 86400, min: 1 },
      'a job is swept this long (s) after its last activity',
    ),
    batchMaxTtlS: int(
      { env: 'SIFT_BATCH_MAX_TTL_S', default: 30 * 86400, min: 60 },
      'the longest `ttl_s` a job may ask for (s; 30 days)',
    ),
    idemTtlS: int(
      { env: 'SIFT_IDEM_TTL_S', default: 86400, min: 1 },
      "how long (s) after a job's last activity its `Idempotency-Key` is honoured",
    ),
    maxLiveJobs: int(
      { env: 'SIFT_MAX_LIVE_JOBS', default: 256, min: 1 },
      'live (queued or running) jobs over all callers before 503 `server_busy`',
    ),
  },
  monitors: MONITOR_KNOBS,
  runner: {
    runnerConcurrency: int(
      { env: 'SIFT_RUNNER_CONCURRENCY', default: 16, min: 1, max: 1024 },
      'batch targets fetched at once',
    ),
    perHostConcurrency: int(
      { env: 'SIFT_PER_HOST_CONCURRENCY', default: 4, min: 1, max: 1024 },
      'of which at most this many per host',
    ),
  },
  webhook: {
    webhookRetryS: text(
      {
        env: 'SIFT_WEBHOOK_RETRY_S',
        default: '5,30,120,600,3600',
        rules: [
          Matches(/^[1-9]\d{0,5}(,[1-9]\d{0,5}){0,31}$/, {
            message:
              'SIFT_WEBHOOK_RETRY_S must be seconds (at least 1), comma separated (e.g. 5,30,120,600,3600)',
          }),
        ],
        read: (v: string) => v.split(',').map(Number),
      },
      'seconds before each retry, comma separated; the last repeats until SIFT_WEBHOOK_GIVE_UP_S',
    ),
    webhookGiveUpS: int(
      { env: 'SIFT_WEBHOOK_GIVE_UP_S', default: 86400, min: 0 },
      'a delivery not delivered this long (s) after its event is given up (`failed`)',
    ),
    webhookTimeoutMs: int(
      { env: 'SIFT_WEBHOOK_TIMEOUT_MS', default: 10_000, min: 100, max: 120_000 },
      'one attempt: connection, answer and the first 4 KiB of its body within this',
    ),
    webhookConcurrency: int(
      { env: 'SIFT_WEBHOOK_CONCURRENCY', default: 16, min: 1, max: 1024 },
      'deliveries an instance sends at once (one per job at a time, in seq order)',
    ),
  },
  fetch: {
    fleetAllow: text(
      { env: 'SIFT_FLEET_ALLOW', default: '', read: parseCidrs },
      'CIDRs fleet callers may reach although private or loopback (e.g. `10.0.0.0/8,fd00::/8`)',
    ),
    proxies: text(
      {
        env: 'SIFT_PROXIES',
        default: '',
        read: parseProxies,
      },
      'egress proxies a request may name (`proxy`): `name=http://host:port` (HTTP CONNECT) or `name=socks5://host:port`, comma-separated, with `user:pass@` when the proxy asks; sift checks the target address itself and asks the proxy for that address',
    ),
    dnsTimeoutMs: int(
      { env: 'SIFT_DNS_TIMEOUT_MS', default: 5000, min: 1, max: 120_000 },
      'a DNS lookup that takes longer fails with `dns_error`',
    ),
    dnsPerCaller: int(
      { env: 'SIFT_DNS_PER_CALLER', default: 4, min: 1, max: 1024 },
      'DNS lookups one caller may have in flight; more wait for a slot (within the timeout)',
    ),
    userAgent: text(
      {
        env: 'SIFT_USER_AGENT',
        default: `sift/${SIFT_VERSION}`,
        shown: 'sift/<version>',
        rules: [IsString(), MaxLength(200)],
      },
      'the User-Agent of every request sift makes (pages, robots.txt, webhooks)',
    ),
    robotsAgent: text(
      {
        env: 'SIFT_ROBOTS_AGENT',
        default: 'sift',
        rules: [
          Matches(/^[A-Za-z_-]{1,64}$/, {
            message: 'SIFT_ROBOTS_AGENT must be a product token (letters, _ and -)',
          }),
        ],
      },
      'the product token robots.txt groups are matched against (`*` applies when none names it)',
    ),
  },
  extract: {
    extractWorkers: int(
      {
        env: 'SIFT_EXTRACT_WORKERS',
        default: -1,
        min: -1,
        max: 64,
        read: (v: number): number | undefined => (v === -1 ? undefined : v),
      },
      'threads that extract pages, started as pages need them (0: on the main thread; -1: one per core, at most 4)',
    ),
    extractQueue: int(
      { env: 'SIFT_EXTRACT_QUEUE', default: 256, min: 1, max: 100_000 },
      'pages waiting for extraction before `/v1/fetch` answers 503 `server_busy` (batches wait)',
    ),
  },
  render: RENDER_KNOBS,
  documents: DOCUMENT_KNOBS,
  'limits.fleet': FLEET_LIMITS,
  'limits.restricted': RESTRICTED_LIMITS,
};
