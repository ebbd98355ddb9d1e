import 'reflect-metadata';
import { Type } from 'class-transformer';
import { SIFT_VERSION } from '../common/version';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';

/**
 * Every environment variable sift reads, with its default. The same defaults are listed in
 * .env.example; a value that fails here stops start-up with a message naming the variable.
 */
export class EnvSchema {
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 8080;

  /** The address to listen on; anything but loopback needs strong tokens (see exposureProblem). */
  @IsString()
  @MinLength(1)
  SIFT_HOST = '127.0.0.1';

  @IsString()
  @MinLength(1)
  SIFT_DB = './data/sift.db';

  /** postgres://… : state in this PostgreSQL database (shared by every instance) instead of SIFT_DB. */
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'SIFT_DATABASE_URL must be a postgres:// URL' })
  SIFT_DATABASE_URL?: string;

  /** token:caller:class, comma separated. */
  @IsString()
  SIFT_TOKENS = '';

  @Type(() => Number)
  @IsInt()
  @Min(0)
  SIFT_CACHE_MAX_BYTES = 256 * 1024 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  SIFT_BATCH_MAX_BYTES = 1024 * 1024 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  SIFT_BATCH_TTL_S = 86400;

  /** The longest `ttl_s` a job may ask for. */
  @Type(() => Number)
  @IsInt()
  @Min(60)
  SIFT_BATCH_MAX_TTL_S = 30 * 86400;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  SIFT_IDEM_TTL_S = 86400;

  /** Seconds between webhook attempts, comma separated; the last repeats until SIFT_WEBHOOK_GIVE_UP_S. */
  @Matches(/^[1-9]\d{0,5}(,[1-9]\d{0,5}){0,31}$/, {
    message: 'SIFT_WEBHOOK_RETRY_S must be seconds (at least 1), comma separated (e.g. 5,30,120,600,3600)',
  })
  SIFT_WEBHOOK_RETRY_S = '5,30,120,600,3600';

  /** A webhook delivery not delivered this long after its event is given up (state failed). */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  SIFT_WEBHOOK_GIVE_UP_S = 86400;

  /** One webhook attempt: connection, answer and the first 4 KiB of its body within this. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(120_000)
  SIFT_WEBHOOK_TIMEOUT_MS = 10_000;

  /** Webhook deliveries this instance sends at once (one per job at a time, in seq order). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1024)
  SIFT_WEBHOOK_CONCURRENCY = 16;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1024)
  SIFT_RUNNER_CONCURRENCY = 16;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1024)
  SIFT_PER_HOST_CONCURRENCY = 4;

  /** CIDRs fleet callers may reach although private, comma separated. */
  @IsString()
  SIFT_FLEET_ALLOW = '';

  @Type(() => Number)
  @IsInt()
  @Min(1)
  SIFT_MAX_LIVE_JOBS = 256;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  SIFT_FLEET_MAX_TARGETS = 10000;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  SIFT_RESTRICTED_MAX_TARGETS = 1000;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  SIFT_FLEET_MAX_LIVE_JOBS = 32;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  SIFT_RESTRICTED_MAX_LIVE_JOBS = 4;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  SIFT_FLEET_OUTPUT_CAP = 2 * 1024 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  SIFT_RESTRICTED_OUTPUT_CAP = 256 * 1024;

  /** Worker threads that extract pages; 0 extracts on the main thread; -1 picks one per core (at most 4). */
  @Type(() => Number)
  @IsInt()
  @Min(-1)
  @Max(64)
  SIFT_EXTRACT_WORKERS = -1;

  /** On SIGTERM, how long targets in flight may take to finish before they are returned to pending. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(600_000)
  SIFT_SHUTDOWN_GRACE_MS = 10_000;

  /**
   * PostgreSQL: the longest a request waits for the database (a connection, or a statement's answer)
   * before it answers 503 storage_unavailable; also each statement's, lock wait's and idle
   * transaction's limit on the server.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(600_000)
  SIFT_DB_TIMEOUT_MS = 5000;

  /** PostgreSQL: how long start-up waits for the database to answer before it gives up (exit 1). */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(3600)
  SIFT_DB_WAIT_S = 60;

  /** PostgreSQL: seconds between an instance's heartbeats. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60)
  SIFT_HEARTBEAT_S = 2;

  /** PostgreSQL: an instance silent this long is lost, and its targets are recovered. */
  @Type(() => Number)
  @IsInt()
  @Min(2)
  @Max(3600)
  SIFT_INSTANCE_TTL_S = 10;

  /** /v1/fetch calls one caller may have in flight. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  SIFT_FLEET_FETCH_CONCURRENCY = 64;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  SIFT_RESTRICTED_FETCH_CONCURRENCY = 8;

  /** Event and NDJSON streams one caller may hold open. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  SIFT_FLEET_MAX_STREAMS = 32;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  SIFT_RESTRICTED_MAX_STREAMS = 4;

  /** Pages waiting for extraction before /v1/fetch answers 503 server_busy (the runner waits). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  SIFT_EXTRACT_QUEUE = 256;

  /** A DNS lookup that takes longer fails with dns_error. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(120_000)
  SIFT_DNS_TIMEOUT_MS = 5000;

  /** DNS lookups one caller may have in flight; more wait for a slot (within the timeout). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1024)
  SIFT_DNS_PER_CALLER = 4;

  /** A request's headers must arrive within this; its whole body within SIFT_REQUEST_TIMEOUT_MS. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(600_000)
  SIFT_HEADERS_TIMEOUT_MS = 10_000;

  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  SIFT_REQUEST_TIMEOUT_MS = 60_000;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug'])
  SIFT_LOG_LEVEL = 'info';

  /** Sent on every request sift makes (pages, robots.txt, webhooks). */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  SIFT_USER_AGENT = `sift/${SIFT_VERSION}`;

  /** The product token robots.txt groups are matched against (else the `*` group applies). */
  @IsOptional()
  @Matches(/^[A-Za-z_-]{1,64}$/, { message: 'SIFT_ROBOTS_AGENT must be a product token (letters, _ and -)' })
  SIFT_ROBOTS_AGENT = 'sift';
}
