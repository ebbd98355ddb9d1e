import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppModule } from '../../src/app.module';
import { configureApp } from '../../src/app.setup';
import { Clock } from '../../src/common/clock';
import { AppConfig, loadConfig } from '../../src/config/app-config';

export const FLEET_TOKEN = 'fleet-token-123';
export const RESTRICTED_TOKEN = 'restricted-token-123';

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
export async function createTestApp(env: Record<string, string> = {}, clock?: Clock): Promise<TestApp> {
  const config = loadConfig({
    SIFT_DB: ':memory:',
    SIFT_TOKENS: `${FLEET_TOKEN}:fleet-caller:fleet,${RESTRICTED_TOKEN}:restricted-caller:restricted`,
    ...env,
  });
  let builder = Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(AppConfig)
    .useValue(config);
  if (clock) builder = builder.overrideProvider(Clock).useValue(clock);
  const moduleRef = await builder.compile();
  const app = configureApp(moduleRef.createNestApplication({ logger: false }));
  await app.init();
  return { app, config };
}
