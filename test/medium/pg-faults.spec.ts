import { sql } from 'kysely';
import { Client } from 'pg';
import { isStorageUnavailable } from '../../src/common/errors';
import { openDcache, type Dcache } from '../../src/dcache';
import { createPgDatabase, emptyPgTables } from '../support/backends';
import { waitUntil } from '../support/wait';

/**
 * Ends every other session on the database, as a server restart or an administrator does, and
 * waits until they are gone: pg_terminate_backend only signals them.
 */
async function terminateAll(url: string, except?: number): Promise<number> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(
      'SELECT pid, pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1',
      [except ?? 0],
    );
    const pids = (r.rows as { pid: number; ended: boolean }[])
      .filter((row) => row.ended)
      .map((row) => row.pid);
    await sessionsGone(c, pids);
    return pids.length;
  } finally {
    await c.end();
  }
}

/** Waits until none of `pids` is a session on the server any more. */
async function sessionsGone(c: Client, pids: number[]): Promise<void> {
  await waitUntil(
    async () =>
      (await c.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids])).rowCount === 0 ||
      undefined,
    `sessions ${pids.join(', ')} to end`,
    10_000,
  );
}

describe('PostgreSQL connections that fail under sift', () => {
  let pg: { url: string; drop: () => Promise<void> };
  let d: Dcache;
  beforeAll(async () => {
    pg = await createPgDatabase();
  });
  beforeEach(async () => {
    d = await openDcache({ url: pg.url });
    await emptyPgTables(d.kysely);
  });
  afterEach(() => d.close());
  afterAll(() => pg.drop());

  it('a connection ended while a transaction holds it rejects that transaction, and the process lives on', async () => {
    const err = await d.db
      .transaction(async (tx) => {
        await tx.jobs.liveBatchJobsTotal();
        // Ended from outside while checked out: pg emits 'error' on the client itself.
        const pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx.q)).rows[0].pid;
        const admin = new Client({ connectionString: pg.url });
        await admin.connect();
        try {
          await admin.query('SELECT pg_terminate_backend($1)', [pid]);
          await sessionsGone(admin, [pid]);
        } finally {
          await admin.end();
        }
        return tx.jobs.liveBatchJobsTotal();
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeDefined();
    expect(isStorageUnavailable(err)).toBe(true);
    // The pool has dropped the dead client: the next statement gets a new one.
    expect(await d.batch.liveBatchJobsTotal()).toBe(0);
  });

  it('idle pooled connections ended together are replaced on the next statement', async () => {
    await Promise.all([1, 2, 3].map(() => d.batch.liveBatchJobsTotal()));
    expect(await terminateAll(pg.url)).toBeGreaterThan(0);
    await waitUntil(
      () =>
        d.batch.liveBatchJobsTotal().then(
          (n) => n === 0 || undefined,
          () => undefined,
        ),
      'a statement to go through on a new connection',
    );
  });

  it('LISTEN is made again after its connection is ended, each time', async () => {
    const got: string[] = [];
    const stop = await d.listen('sift_fault_test', (p) => got.push(p));
    try {
      const notifier = new Client({ connectionString: pg.url });
      await notifier.connect();
      try {
        for (const round of [1, 2, 3]) {
          await terminateAll(pg.url, (await notifier.query('SELECT pg_backend_pid() AS p')).rows[0].p);
          // Notifications sent while it is away are missed (callers poll for those); once it is
          // back, they arrive.
          await waitUntil(
            async () => {
              await notifier.query(`NOTIFY sift_fault_test, 'r${round}'`);
              return got.includes(`r${round}`) || undefined;
            },
            `notification r${round} after the listening connection was ended`,
            15_000,
            200,
          );
        }
      } finally {
        await notifier.end();
      }
    } finally {
      await stop();
    }
  });

  it('a statement unanswered within the limit fails as unavailable and frees its connection', async () => {
    const short = await openDcache({ url: pg.url, timeoutMs: 300 });
    try {
      const started = Date.now();
      const err = await sql`SELECT pg_sleep(10)`.execute(short.kysely).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isStorageUnavailable(err)).toBe(true);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await short.batch.liveBatchJobsTotal()).toBe(0);
    } finally {
      await short.close();
    }
  });
});
