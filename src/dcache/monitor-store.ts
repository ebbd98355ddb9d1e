import type { Kysely, Selectable } from 'kysely';
import type { Tx } from './db';
import { toJob, type BatchJob } from './rows';
import type { MonitorTable, Tables } from './schema';

export type MonitorRow = Selectable<MonitorTable>;

/** A monitor as created (its counters and run fields start empty). */
export type NewMonitor = Omit<MonitorRow, 'runs' | 'last_run_id' | 'last_run_at' | 'last_error' | 'paused'>;

/** (PostgreSQL's BIGINT comes back as a string.) */
function rowOf(r: MonitorRow): MonitorRow {
  return {
    ...r,
    next_at: Number(r.next_at),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    last_run_at: r.last_run_at === null ? null : Number(r.last_run_at),
  };
}

/**
 * Monitors, by caller; every read names the caller, so none reads another's. A run is claimed by
 * moving the monitor's next slot from the one it read (claim): of several instances that read the
 * same due slot, one moves it, the others find it moved and submit nothing.
 */
export class MonitorStore {
  constructor(private readonly q: Kysely<Tables>) {}

  async create(m: NewMonitor): Promise<MonitorRow> {
    const row: MonitorRow = {
      ...m,
      paused: 0,
      runs: 0,
      last_run_id: null,
      last_run_at: null,
      last_error: null,
    };
    await this.q.insertInto('monitor').values(row).execute();
    return row;
  }

  async count(caller: { name: string; callerClass: string }): Promise<number> {
    const r = await this.q
      .selectFrom('monitor')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('caller', '=', caller.name)
      .where('caller_class', '=', caller.callerClass)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async list(caller: { name: string; callerClass: string }): Promise<MonitorRow[]> {
    const rows = await this.q
      .selectFrom('monitor')
      .selectAll()
      .where('caller', '=', caller.name)
      .where('caller_class', '=', caller.callerClass)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(rowOf);
  }

  async get(caller: { name: string; callerClass: string }, id: string): Promise<MonitorRow | undefined> {
    const r = await this.q
      .selectFrom('monitor')
      .selectAll()
      .where('id', '=', id)
      .where('caller', '=', caller.name)
      .where('caller_class', '=', caller.callerClass)
      .executeTakeFirst();
    return r && rowOf(r);
  }

  /** Pauses (next_at kept) or resumes (from `nextAt`) a monitor; false when it is not there. */
  async setPaused(id: string, paused: boolean, nowMs: number, nextAt?: number): Promise<boolean> {
    const r = await this.q
      .updateTable('monitor')
      .set({
        paused: paused ? 1 : 0,
        updated_at: nowMs,
        ...(nextAt !== undefined ? { next_at: nextAt } : {}),
      })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<boolean> {
    const r = await this.q.deleteFrom('monitor').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Monitors whose slot has come, oldest slot first. */
  async due(nowMs: number, limit: number): Promise<MonitorRow[]> {
    const rows = await this.q
      .selectFrom('monitor')
      .selectAll()
      .where('paused', '=', 0)
      .where('next_at', '<=', nowMs)
      .orderBy('next_at')
      .limit(limit)
      .execute();
    return rows.map(rowOf);
  }

  /**
   * Claims the run of the slot `slot` read from the monitor: moves next_at to `next` only while
   * it is still `slot` and the monitor is not paused. True for the one transaction that moved it.
   */
  async claim(
    tx: Tx,
    id: string,
    slot: number,
    next: number,
    nowMs: number,
    error: string | null,
  ): Promise<boolean> {
    const r = await tx.q
      .updateTable('monitor')
      .set((eb) => ({
        next_at: next,
        last_run_at: nowMs,
        updated_at: nowMs,
        last_error: error,
        runs: error === null ? eb('runs', '+', 1) : eb.ref('runs'),
      }))
      .where('id', '=', id)
      .where('next_at', '=', slot)
      .where('paused', '=', 0)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async setLastRun(tx: Tx, id: string, jobId: string): Promise<void> {
    await tx.q.updateTable('monitor').set({ last_run_id: jobId }).where('id', '=', id).execute();
  }

  /** A monitor's runs (its jobs), newest first. */
  async runs(monitorId: string, limit: number): Promise<BatchJob[]> {
    const rows = await this.q
      .selectFrom('batch_job')
      .selectAll()
      .where('monitor_id', '=', monitorId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toJob);
  }
}
