import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from '../../src/app.module';
import { configureApp } from '../../src/app.setup';
import { TERMINAL_JOB_STATUSES } from '../../src/common/job-status';
import { Clock } from '../../src/common/clock';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { RESOLVER } from '../../src/fetch/fetch.module';
import { ExtractPool } from '../../src/extract/extract-pool';
import type { Resolver } from '../../src/fetch/fetcher';
import { waitUntil } from './wait';

export { waitUntil };

export const FLEET_TOKEN = 'fleet-token-123';
export const RESTRICTED_TOKEN = 'restricted-token-123';

/** The headers of a request by the default fleet caller and the default restricted caller. */
export const fleet = { Authorization: `Bearer ${FLEET_TOKEN}` };
export const restricted = { Authorization: `Bearer ${RESTRICTED_TOKEN}` };

/** A clock tests move by hand. */
export class TestClock extends Clock {
  constructor(public t = 1_700_000_000_000) {
    super();
  }
  override now(): number {
    return Math.floor(this.t / 1000);
  }
  override nowMs(): number {
    return this.t;
  }
}

export function tmpDbPath(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-test-')), 'sift.db');
}

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
}

/** The real app, as main.ts builds it, over a config made from env (plus test tokens). */
/** Answers like DNS would, from a table: tests never ask a real resolver. */
export function tableResolver(table: Record<string, string[] | (() => string[])>): Resolver {
  return async (host) => {
    const entry = table[host.toLowerCase()];
    const addrs = typeof entry === 'function' ? entry() : entry;
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

export const defaultResolver = tableResolver({ localhost: ['127.0.0.1'], 'fixture.test': ['127.0.0.1'] });

export interface TestAppOptions {
  clock?: Clock;
  resolver?: Resolver;
  /** A module whose extractHtml the extraction worker runs instead of sift's (fault injection). */
  extractModule?: string;
  logger?: LoggerService;
}

export async function createTestApp(
  env: Record<string, string> = {},
  opts: TestAppOptions = {},
): Promise<TestApp> {
  const clock = opts.clock;
  const config = loadConfig({
    SIFT_DB: ':memory:',
    SIFT_SHUTDOWN_GRACE_MS: '0',
    SIFT_TOKENS: `${FLEET_TOKEN}:fleet-caller:fleet,${RESTRICTED_TOKEN}:restricted-caller:restricted`,
    ...env,
  });
  let builder = Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(AppConfig)
    .useValue(config);
  if (clock) builder = builder.overrideProvider(Clock).useValue(clock);
  // What the modules log as they are put together (a warning at start-up) goes there too.
  if (opts.logger) builder = builder.setLogger(opts.logger);
  builder = builder.overrideProvider(RESOLVER).useValue(opts.resolver ?? defaultResolver);
  if (opts.extractModule) {
    builder = builder
      .overrideProvider(ExtractPool)
      .useValue(new ExtractPool({ size: 1, module: opts.extractModule }));
  }
  const moduleRef = await builder.compile();
  const app = configureApp(
    moduleRef.createNestApplication({ logger: opts.logger ?? false, bodyParser: false }),
  );
  await app.init();
  return { app, config };
}

/**
 * Polls a job's view until it reaches one of `statuses` (a finished status by default). The
 * deadline is a minute: it only stops a stuck test. A 500-target job takes 2-4 s on an idle
 * machine and 12 s with both cores busy beside the tests.
 */
export async function waitForJob(
  app: INestApplication,
  id: string,
  headers: Record<string, string> = { Authorization: `Bearer ${FLEET_TOKEN}` },
  statuses: readonly string[] = TERMINAL_JOB_STATUSES,
): Promise<Record<string, unknown> & { status: string }> {
  let last: unknown;
  return waitUntil(
    async () => {
      const r = await request(app.getHttpServer()).get(`/v1/batch/${id}`).set(headers);
      last = r.body;
      return statuses.includes(r.body.status)
        ? (r.body as Record<string, unknown> & { status: string })
        : undefined;
    },
    () => `job ${id} to reach ${statuses.join('|')}; last seen ${JSON.stringify(last)}`,
    60_000,
  );
}
