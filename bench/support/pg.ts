import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** The PostgreSQL server benchmarks use: SIFT_TEST_PG_URL, else the local one. */
export const PG_URL = process.env.SIFT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A database of its own on that server, and how to drop it. */
export async function pgDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sift_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (q: string) => {
    const c = new Client({ connectionString: PG_URL });
    await c.connect();
    try {
      await c.query(q);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
