import * as ipaddr from 'ipaddr.js';
import { SCHEMA } from './env.schema';
import { envReader, type Knob } from './knob';
import { ConfigError, type CallerClass } from './parsers';

export { ConfigError, type CallerClass, type TokenEntry } from './parsers';

type Schema = typeof SCHEMA;
/** What AppConfig holds of a section: each knob's value under the knob's name. */
type Values<S> = { [K in keyof S]: S[K] extends Knob<infer T> ? T : never };
type FlatSection = Exclude<keyof Schema, `limits.${string}`>;
type Merged<U> = (U extends unknown ? (u: U) => void : never) extends (u: infer I) => void ? I : never;
type Shape = Merged<{ [S in FlatSection]: Values<Schema[S]> }[FlatSection]> & {
  limits: { [C in CallerClass]: Values<Schema[`limits.${C}`]> };
};

/** A caller class's limits (SCHEMA's `limits.fleet` and `limits.restricted`). */
export type ClassLimits = Shape['limits'][CallerClass];

/**
 * The validated configuration, built once from the environment: a property for each knob of
 * SCHEMA (its type is what the knob reads), the `limits.<class>` sections under `limits`. A class,
 * so that it is the injection token too.
 */
export class AppConfig extends (class {} as new () => Shape) {}

const KNOBS: Knob[] = Object.values(SCHEMA).flatMap((section) => Object.values(section) as Knob[]);
const readEnv = envReader(KNOBS);

/** The token .env.example ships so that a fresh clone is usable at once; start-up warns about it. */
export const DEV_TOKEN = 'dev-token';

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
    `create strong tokens (node dist/src/cli.js token create CALLER --class restricted) or bind SIFT_HOST=127.0.0.1`
  );
}

/** Validates env and builds the config; throws ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const values = readEnv(env);
  const cfg: Record<string, any> = new AppConfig();
  cfg.limits = {};
  for (const [section, knobs] of Object.entries(SCHEMA)) {
    const cls = /^limits\.(.+)$/.exec(section)?.[1];
    const into: Record<string, unknown> = cls ? (cfg.limits[cls] = {}) : cfg;
    for (const [name, knob] of Object.entries(knobs) as [string, Knob][])
      into[name] = knob.read(values[knob.env]);
  }
  const config = cfg as AppConfig;
  // The rules between knobs.
  if (config.instanceTtlS <= config.heartbeatS) {
    throw new ConfigError('invalid configuration: SIFT_INSTANCE_TTL_S must be longer than SIFT_HEARTBEAT_S');
  }
  config.requestTimeoutMs = Math.max(config.requestTimeoutMs, config.headersTimeoutMs);
  for (const [cls, limits] of Object.entries(config.limits)) {
    const unknown = limits.proxies === '*' ? undefined : limits.proxies.find((n) => !config.proxies.has(n));
    if (unknown !== undefined)
      throw new ConfigError(
        `invalid configuration: SIFT_${cls.toUpperCase()}_PROXIES names "${unknown}", which SIFT_PROXIES does not`,
      );
  }
  return config;
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
