/**
 * sift's connections to PostgreSQL, its one door to pg: loaded only when SIFT_DATABASE_URL names
 * a server (dcache.ts), so a server on SQLite never holds pg (2.8 MB of heap).
 */
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import { Client, Pool, types as pgTypes, type ClientConfig, type PoolConfig } from 'pg';
import { DATABASE_ERROR } from '../common/errors';
import { DEFAULT_PG_LIMITS, type Opened, type PgLimits } from './connections';
import type { Tables } from './schema';

/** 64-bit integers and sums come back as numbers: sift's are unix seconds, byte and row counts. */
const asNumber = (v: string) => Number(v);
const INT8 = 20;
const NUMERIC = 1700;

/**
 * A client that prepares each statement once per connection (named by its text's hash): the same
 * few statements run for every batch target, and planning them anew is most of their cost. The
 * set of texts is small (Kysely's, with values as parameters).
 *
 * It also never takes the process down and never waits for ever: it listens for its own errors
 * for its whole life (pg emits them on a client the pool has handed out, where nobody else
 * listens), and a statement unanswered after `timeoutMs` destroys the connection, so the query
 * fails, the pool drops the client, and a silent network (no reset) is noticed.
 */
class PreparingClient extends Client {
  private readonly answerMs: number;

  constructor(config: ClientConfig & { answerMs: number }) {
    super(config);
    this.answerMs = config.answerMs;
    this.on('error', () => undefined);
  }

  override query(...args: unknown[]): any {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && args.length === 2) {
      const name = `s${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
      return this.bounded(super.query({ name, text, values }) as Promise<unknown>);
    }
    const r = (super.query as (...a: unknown[]) => unknown)(...args);
    return r instanceof Promise ? this.bounded(r) : r;
  }

  private bounded<T>(p: Promise<T>): Promise<T> {
    const timer = setTimeout(() => {
      const conn = (this as unknown as { connection?: { stream?: { destroy(e: Error): void } } }).connection;
      conn?.stream?.destroy(new Error(`PostgreSQL did not answer within ${this.answerMs} ms`));
    }, this.answerMs);
    timer.unref();
    return p.then(
      (r) => {
        clearTimeout(timer);
        return r;
      },
      (err: unknown) => {
        clearTimeout(timer);
        throw markDatabaseError(err);
      },
    );
  }
}

/**
 * Marks an error as the database's (see isStorageUnavailable): only such an error may be taken for
 * the database being away. A fetch's ECONNRESET is the page's, never the database's.
 */
function markDatabaseError(err: unknown): unknown {
  if (err && typeof err === 'object') (err as Record<symbol, boolean>)[DATABASE_ERROR] = true;
  return err;
}

/** pg's connection settings for sift's limits: every connection, pooled or listening, gets them. */
function pgClientConfig(url: string, limits: PgLimits): ClientConfig {
  const t = limits.timeoutMs;
  return {
    connectionString: url,
    connectionTimeoutMillis: t,
    // The server's side of a lost client: keepalive probes find a peer that is gone, and a
    // transaction left open (its client stalled) is ended with its locks, so other instances go on.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    statement_timeout: limits.unboundedStatements ? undefined : t,
    lock_timeout: limits.unboundedStatements ? undefined : Math.max(100, Math.floor(t / 2)),
    idle_in_transaction_session_timeout: t,
    options: '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3',
  };
}

/** A small pool on one PostgreSQL database (`postgres://…`). */
export function openPostgres(
  url: string,
  trace?: (sql: string) => void,
  max = 8,
  limits: PgLimits = DEFAULT_PG_LIMITS,
): Opened {
  const pool = new Pool({
    ...pgClientConfig(url, limits),
    max,
    Client: PreparingClient,
    // A statement's answer may take up to the server's statement_timeout; past that and a margin,
    // the connection is taken for dead.
    answerMs: limits.unboundedStatements ? 24 * 3600_000 : limits.timeoutMs + 1000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 || oid === NUMERIC
          ? asNumber
          : pgTypes.getTypeParser(oid, format)) as typeof pgTypes.getTypeParser,
    },
  } as unknown as PoolConfig);
  // An idle client that loses its server must not take the process down with it.
  pool.on('error', () => undefined);
  // A connection that cannot be made (refused, timed out) fails the request as the database's.
  const connect = pool.connect.bind(pool) as () => Promise<unknown>;
  (pool as unknown as { connect: () => Promise<unknown> }).connect = () =>
    connect().catch((err: unknown) => {
      throw markDatabaseError(err);
    });
  const db = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool }),
    log: trace
      ? (e) => {
          if (e.level === 'query') trace(e.query.sql);
        }
      : undefined,
  });
  return { backend: 'postgres', db };
}

/** A connection of its own (a LISTEN, a first try), with sift's limits; not yet connected. */
export function pgClient(url: string, limits: PgLimits): Client {
  return new Client(pgClientConfig(url, limits));
}
