import { sql } from 'kysely';
import { ID_CHUNK, chunks } from './rows';
import type { Tx } from './db';

/*
 * The lock order. Every transaction takes its locks in this order, so that two transactions never
 * wait on each other in a circle (PostgreSQL: several instances, row locks; SQLite has one writer
 * and takes the whole database at BEGIN IMMEDIATE, so these helpers do nothing there):
 *
 *   1. at most one advisory lock of a kind of work (submit, delivery claim, housekeeping);
 *   2. job rows (batch_job), with lockJob / lockJobs, several in id order;
 *   3. those jobs' target rows (batch_target);
 *   4. the rest: host locks (lockHosts, in key order), events, webhook and deliveries, instances,
 *      a page's history (lockPageHistory, alone in its transaction).
 *
 * A statement on a target row also updates its job row (its counters, see counters.ts), so
 * a transaction that changes a job's targets takes the job row first: cancel, results (in job id
 * order), restart and lost-instance recovery, deferral, the return of targets at shutdown, purge,
 * sweep and eviction.
 *
 * The claim is the one exception, and why it is safe: it locks only *pending* candidates, with
 * SKIP LOCKED (it never waits for a target row), then host locks, then the job row right before
 * its update, so a claim never holds the job row while it scans. A cancel commits the job's
 * status under its row alone, then ends its targets passing over the rows a claim holds (SKIP
 * LOCKED: that claim finds the job cancelled when it takes the row, and claims nothing); before,
 * a cancel that held the job row waited for a claim's pending rows while the claim waited for the
 * row, and each such deadlock cost deadlock_timeout (503 after 6-15 s with three instances). A
 * transaction holding a job row waits for that job's pending rows only when it fails the job
 * (restart or lost-instance recovery): a claim caught between them is a deadlock PostgreSQL
 * breaks after deadlock_timeout, and Db.transaction runs the loser again. The same holds for two
 * claims that look past their first page of candidates and lock each other's hosts.
 */

/** Advisory lock keys (PostgreSQL): one per kind of work that must not run twice at once. */
const SUBMIT_LOCK = 0x51f7_0001;
export const RECOVERY_LOCK = 0x51f7_0002;
export const SWEEP_LOCK = 0x51f7_0003;
/** The first key of host locks (pg_advisory_xact_lock(int4, int4): a key space of its own). */
const HOST_LOCKS = 0x51f7;
const DELIVERY_LOCK = 0x51f7_0005;
/** The first key of a caller's page history locks (a key space of its own, as hosts'). */
const HISTORY_LOCKS = 0x51f8;

/** Takes the job's row for the rest of the transaction (before any of its targets). */
export async function lockJob(tx: Tx, id: string): Promise<void> {
  if (tx.pg) await tx.q.selectFrom('batch_job').select('id').where('id', '=', id).forUpdate().execute();
}

/** Takes several jobs' rows, in id order (see the lock order above). */
export async function lockJobs(tx: Tx, ids: readonly string[]): Promise<void> {
  if (!tx.pg || ids.length === 0) return;
  const sorted = [...new Set(ids)].sort();
  for (const part of chunks(sorted, ID_CHUNK)) {
    await tx.q
      .selectFrom('batch_job')
      .select('id')
      .where('id', 'in', part)
      .orderBy('id')
      .forUpdate()
      .execute();
  }
}

/**
 * Waits until no other submit is between its checks and its commit, so the idempotency key and
 * the live-job limits hold exactly when instances submit at once.
 */
export async function lockSubmits(tx: Tx): Promise<void> {
  if (tx.pg) await sql`SELECT pg_advisory_xact_lock(${SUBMIT_LOCK})`.execute(tx.q);
}

/**
 * Takes a lock per host (FNV-1a of its name, so two hosts may share one) in key order, for the rest
 * of the transaction: a claim that counts a host's running targets and adds to them holds it, so
 * the count it reads is exact until it commits.
 */
export async function lockHosts(tx: Tx, hosts: readonly string[]): Promise<void> {
  if (!tx.pg || hosts.length === 0) return;
  const keys = [...new Set(hosts.map(hashKey))].sort((a, b) => a - b);
  await sql`SELECT pg_advisory_xact_lock(${HOST_LOCKS}, k) FROM unnest(${keys}::int4[]) WITH ORDINALITY AS t(k, o) ORDER BY o`.execute(
    tx.q,
  );
}

/**
 * Takes the lock of one page's history (its owner and page key) for the rest of the transaction,
 * so two fetches of the page at once each compare with the version before their own.
 */
export async function lockPageHistory(tx: Tx, owner: string, page: string): Promise<void> {
  if (tx.pg)
    await sql`SELECT pg_advisory_xact_lock(${HISTORY_LOCKS}, ${hashKey(`${owner} ${page}`)})`.execute(tx.q);
}

/** A host's lock key: FNV-1a, 32 bits, as a signed int4. */
function hashKey(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** Waits for other instances' delivery claims to commit (see DeliveryRepository.claimDeliveries). */
export async function lockDeliveries(tx: Tx): Promise<void> {
  if (tx.pg) await sql`SELECT pg_advisory_xact_lock(${DELIVERY_LOCK})`.execute(tx.q);
}

/**
 * True when this instance may do the housekeeping named by `key` (sweep, eviction, recovery) now,
 * false while another instance does it. Released at commit.
 */
export async function tryHousekeepingLock(tx: Tx, key: number): Promise<boolean> {
  if (!tx.pg) return true;
  const r = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${key}) AS ok`.execute(tx.q);
  return r.rows[0].ok;
}
