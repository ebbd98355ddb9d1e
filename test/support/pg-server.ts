import { Client } from 'pg';
import { ThrowawayCluster } from './pg-cluster';

/**
 * Jest's global setup: the PostgreSQL suites need a server. SIFT_TEST_PG_URL (default the local
 * one) is used when it answers; otherwise a throwaway server is started from the system's
 * initdb/pg_ctl for this run and stopped after it. No server and no way to start one is an error:
 * the PostgreSQL suites are never skipped.
 */
const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

async function answers(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

export default async function setup(): Promise<void> {
  const url = process.env.SIFT_TEST_PG_URL ?? DEFAULT_URL;
  if (await answers(url)) {
    process.env.SIFT_TEST_PG_URL = url;
    return;
  }
  let cluster: ThrowawayCluster;
  try {
    cluster = await ThrowawayCluster.start();
  } catch (err) {
    throw new Error(
      `no PostgreSQL server answers at ${url}, and none could be started (${(err as Error).message}): ` +
        'install PostgreSQL (Debian: postgresql) or set SIFT_TEST_PG_URL',
    );
  }
  process.env.SIFT_TEST_PG_URL = cluster.url();
  (globalThis as { siftPgServer?: ThrowawayCluster }).siftPgServer = cluster;
}
