import { sql } from 'kysely';
import { ID_CHUNK, chunks } from './rows';
import type { Tx } from './db';

/*
 * The lock order. Every transaction takes its locks in this order, so that two transactions never
 * wait on each other in a circle (PostgreSQL: several instances, row locks; SQLite has one writer
 * and takes the whole database at BEGIN IMMEDIATE, so these helpers do nothing there):
 *
 *   1. at most one advisory lock of a kind of work (submit, claim, delivery claim, housekeeping);
 *   2. job rows (batch_job), with lockJob / lockJobs, several in id order;
 *   3. those jobs' target rows (batch_target);
 *   4. the rest: events, webhook and deliveries, instances.
 *
 * A statement on a target row also updates its job row (the count triggers of migration 0001), so
 * a transaction that changes a job's targets takes the job row first: cancel, results (in job id
 * order), restart and lost-instance recovery, deferral, the return of targets at shutdown, purge,
 * sweep and eviction. The claim (JobLifecycle.claim) is the one exception left: it takes the claim
 * lock and then target rows.
 */

/** Advisory lock keys (PostgreSQL): one per kind of work that must not run twice at once. */
const SUBMIT_LOCK = 0x51f7_0001;
export const RECOVERY_LOCK = 0x51f7_0002;
export const SWEEP_LOCK = 0x51f7_0003;
const CLAIM_LOCK = 0x51f7_0004;
const DELIVERY_LOCK = 0x51f7_0005;

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
 * Waits for other instances' claims to commit, so the running count per host a claim reads is
 * the one it adds to. A claim is a few statements.
 */
export async function lockClaims(tx: Tx): Promise<void> {
  if (tx.pg) await sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(tx.q);
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
