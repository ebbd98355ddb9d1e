import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import * as ipaddr from 'ipaddr.js';
import { EnvSchema } from './env.schema';

export type CallerClass = 'fleet' | 'restricted';

export interface ClassLimits {
  maxTargets: number;
  maxLiveJobs: number;
  outputCap: number;
  /** /v1/fetch calls in flight per caller. */
  fetchConcurrency: number;
  /** Open event or NDJSON streams per caller. */
  maxStreams: number;
}

export interface TokenEntry {
  token: string;
  caller: string;
  callerClass: CallerClass;
}

/** The validated configuration, built once from the environment. */
export class AppConfig {
  port: number;
  host: string;
  dbPath: string;
  /** PostgreSQL instead of the SQLite file, when set. */
  databaseUrl?: string;
  /** PostgreSQL: the longest a request waits for the database (ms). */
  dbTimeoutMs: number;
  /** PostgreSQL: how long start-up waits for the database (s). */
  dbWaitS: number;
  tokens: TokenEntry[];
  cacheMaxBytes: number;
  batchMaxBytes: number;
  batchTtlS: number;
  batchMaxTtlS: number;
  idemTtlS: number;
  /** Seconds before each webhook retry; the last repeats. */
  webhookRetryS: number[];
  webhookGiveUpS: number;
  webhookTimeoutMs: number;
  webhookConcurrency: number;
  runnerConcurrency: number;
  perHostConcurrency: number;
  fleetAllow: [ipaddr.IPv4 | ipaddr.IPv6, number][];
  maxLiveJobs: number;
  limits: Record<CallerClass, ClassLimits>;
  logLevel: string;
  userAgent: string;
  robotsAgent: string;
  shutdownGraceMs: number;
  heartbeatS: number;
  instanceTtlS: number;
  /** Extraction worker threads; undefined picks one per core. */
  extractWorkers: number | undefined;
  extractQueue: number;
  dnsTimeoutMs: number;
  dnsPerCaller: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export class ConfigError extends Error {}

function describe(e: ValidationError, given: Record<string, string>): string {
  const why = Object.values(e.constraints ?? {}).join('; ');
  return `${e.property}=${JSON.stringify(given[e.property])} is invalid: ${why}`;
}

/** The token .env.example ships so that a fresh clone is usable at once; start-up warns about it. */
export const DEV_TOKEN = 'dev-token';

function parseTokens(raw: string): TokenEntry[] {
  const out: TokenEntry[] = [];
  for (const item of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [token, caller, cls, ...rest] = item.split(':');
    if (!token || !caller || rest.length > 0 || (cls !== 'fleet' && cls !== 'restricted')) {
      throw new ConfigError(
        `SIFT_TOKENS entry "${item.replace(/^[^:]*/, '***')}" is invalid: expected token:caller:fleet|restricted`,
      );
    }
    if (token.length < 8)
      throw new ConfigError(`SIFT_TOKENS: the token of caller "${caller}" is shorter than 8 characters`);
    const other = out.find((t) => t.caller === caller && t.callerClass !== cls);
    if (other) {
      throw new ConfigError(
        `SIFT_TOKENS gives caller "${caller}" both classes: a caller name has one class (give the other token another name)`,
      );
    }
    out.push({ token, caller, callerClass: cls });
  }
  return out;
}

/** Tokens at least this long may be used on a server reachable from the network. */
export const MIN_EXPOSED_TOKEN_LENGTH = 24;

/** Whether a bind address reaches only this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const bare = host.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return false;
  const a = ipaddr.process(bare);
  return a.range() === 'loopback';
}

/**
 * Why this configuration must not start, or undefined: a bind beyond loopback with the development
 * token or a short token would let anyone who can reach the port use sift as an open proxy.
 */
export function exposureProblem(cfg: AppConfig): string | undefined {
  if (isLoopbackHost(cfg.host)) return undefined;
  const weak = cfg.tokens.filter((t) => t.token === DEV_TOKEN || t.token.length < MIN_EXPOSED_TOKEN_LENGTH);
  if (weak.length === 0) return undefined;
  const who = weak.map((t) => (t.token === DEV_TOKEN ? `the development token` : `caller "${t.caller}"`));
  return (
    `SIFT_HOST=${cfg.host} reaches beyond this machine, but SIFT_TOKENS has ${who.join(', ')} ` +
    `with a token shorter than ${MIN_EXPOSED_TOKEN_LENGTH} characters or known to everyone: ` +
    `create strong tokens (npx sift token create CALLER --class restricted) or bind SIFT_HOST=127.0.0.1`
  );
}

function parseCidrs(raw: string): AppConfig['fleetAllow'] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((c) => {
      try {
        return ipaddr.parseCIDR(c);
      } catch {
        throw new ConfigError(
          `SIFT_FLEET_ALLOW entry "${c}" is not a CIDR (for example 10.0.0.0/8 or fd00::/8)`,
        );
      }
    });
}

/** Validates env and builds the config; throws ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const known = Object.keys(new EnvSchema());
  const given: Record<string, string> = {};
  for (const k of known) {
    const v = env[k];
    if (v !== undefined && v !== '') given[k] = v;
  }
  const parsed = plainToInstance(EnvSchema, given);
  const errors = validateSync(parsed, { forbidUnknownValues: true });
  if (errors.length > 0) {
    throw new ConfigError(`invalid configuration: ${errors.map((e) => describe(e, given)).join(', ')}`);
  }
  const cfg = new AppConfig();
  cfg.port = parsed.PORT;
  cfg.host = parsed.SIFT_HOST;
  cfg.dbPath = parsed.SIFT_DB;
  cfg.databaseUrl = parsed.SIFT_DATABASE_URL || undefined;
  cfg.dbTimeoutMs = parsed.SIFT_DB_TIMEOUT_MS;
  cfg.dbWaitS = parsed.SIFT_DB_WAIT_S;
  cfg.tokens = parseTokens(parsed.SIFT_TOKENS);
  cfg.cacheMaxBytes = parsed.SIFT_CACHE_MAX_BYTES;
  cfg.batchMaxBytes = parsed.SIFT_BATCH_MAX_BYTES;
  cfg.batchTtlS = parsed.SIFT_BATCH_TTL_S;
  cfg.batchMaxTtlS = parsed.SIFT_BATCH_MAX_TTL_S;
  cfg.idemTtlS = parsed.SIFT_IDEM_TTL_S;
  cfg.webhookRetryS = parsed.SIFT_WEBHOOK_RETRY_S.split(',').map(Number);
  cfg.webhookGiveUpS = parsed.SIFT_WEBHOOK_GIVE_UP_S;
  cfg.webhookTimeoutMs = parsed.SIFT_WEBHOOK_TIMEOUT_MS;
  cfg.webhookConcurrency = parsed.SIFT_WEBHOOK_CONCURRENCY;
  cfg.runnerConcurrency = parsed.SIFT_RUNNER_CONCURRENCY;
  cfg.perHostConcurrency = parsed.SIFT_PER_HOST_CONCURRENCY;
  cfg.fleetAllow = parseCidrs(parsed.SIFT_FLEET_ALLOW);
  cfg.maxLiveJobs = parsed.SIFT_MAX_LIVE_JOBS;
  cfg.limits = {
    fleet: {
      maxTargets: parsed.SIFT_FLEET_MAX_TARGETS,
      maxLiveJobs: parsed.SIFT_FLEET_MAX_LIVE_JOBS,
      outputCap: parsed.SIFT_FLEET_OUTPUT_CAP,
      fetchConcurrency: parsed.SIFT_FLEET_FETCH_CONCURRENCY,
      maxStreams: parsed.SIFT_FLEET_MAX_STREAMS,
    },
    restricted: {
      maxTargets: parsed.SIFT_RESTRICTED_MAX_TARGETS,
      maxLiveJobs: parsed.SIFT_RESTRICTED_MAX_LIVE_JOBS,
      outputCap: parsed.SIFT_RESTRICTED_OUTPUT_CAP,
      fetchConcurrency: parsed.SIFT_RESTRICTED_FETCH_CONCURRENCY,
      maxStreams: parsed.SIFT_RESTRICTED_MAX_STREAMS,
    },
  };
  cfg.logLevel = parsed.SIFT_LOG_LEVEL;
  cfg.userAgent = parsed.SIFT_USER_AGENT;
  cfg.robotsAgent = parsed.SIFT_ROBOTS_AGENT;
  cfg.shutdownGraceMs = parsed.SIFT_SHUTDOWN_GRACE_MS;
  cfg.heartbeatS = parsed.SIFT_HEARTBEAT_S;
  cfg.instanceTtlS = parsed.SIFT_INSTANCE_TTL_S;
  if (cfg.instanceTtlS <= cfg.heartbeatS) {
    throw new ConfigError('invalid configuration: SIFT_INSTANCE_TTL_S must be longer than SIFT_HEARTBEAT_S');
  }
  cfg.extractWorkers = parsed.SIFT_EXTRACT_WORKERS === -1 ? undefined : parsed.SIFT_EXTRACT_WORKERS;
  cfg.extractQueue = parsed.SIFT_EXTRACT_QUEUE;
  cfg.dnsTimeoutMs = parsed.SIFT_DNS_TIMEOUT_MS;
  cfg.dnsPerCaller = parsed.SIFT_DNS_PER_CALLER;
  cfg.headersTimeoutMs = parsed.SIFT_HEADERS_TIMEOUT_MS;
  cfg.requestTimeoutMs = Math.max(parsed.SIFT_REQUEST_TIMEOUT_MS, parsed.SIFT_HEADERS_TIMEOUT_MS);
  return cfg;
}

/** Where the state lives: the PostgreSQL database when one is configured, else the SQLite file. */
export function databaseOf(cfg: AppConfig): { url: string } | { path: string } {
  return cfg.databaseUrl ? { url: cfg.databaseUrl } : { path: cfg.dbPath };
}

/** The database for logs and messages, without a password. */
export function databaseName(cfg: AppConfig): string {
  if (!cfg.databaseUrl) return cfg.dbPath;
  const u = new URL(cfg.databaseUrl);
  u.password = '';
  return u.toString();
}
