import type { Kysely } from 'kysely';
import type { Tx } from './db';
import type { Tables } from './schema';

/**
 * Reads of the sift_instance table: one row per running process on the database, with its heartbeat. An
 * instance whose heartbeat is older than the TTL is lost; its running targets are recovered.
 */
export class InstanceReader {
  constructor(protected readonly q: Kysely<Tables>) {}

  /** Instances whose last heartbeat is at or before `cutoff`. */
  async lostInstances(cutoff: number): Promise<string[]> {
    const rows = await this.q
      .selectFrom('sift_instance')
      .select('id')
      .where('heartbeat_at', '<=', cutoff)
      .orderBy('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** Instances alive at `cutoff` or later, with the targets each holds. */
  async liveInstances(cutoff: number): Promise<{ id: string; host: string; claims: number }[]> {
    const rows = await this.q
      .selectFrom('sift_instance as i')
      .leftJoin('batch_target as t', (j) => j.onRef('t.holder', '=', 'i.id').on('t.status', '=', 'running'))
      .select(['i.id', 'i.host', (eb) => eb.fn.count<number>('t.idx').as('claims')])
      .where('i.heartbeat_at', '>', cutoff)
      .groupBy(['i.id', 'i.host'])
      .orderBy('i.id')
      .execute();
    return rows.map((r) => ({ id: r.id, host: r.host, claims: Number(r.claims) }));
  }
}

/** The writers of sift_instance, inside a transaction. */
export class InstanceRepository extends InstanceReader {
  constructor(tx: Tx) {
    super(tx.q);
  }

  async registerInstance(i: { id: string; host: string; now: number }): Promise<void> {
    await this.q
      .insertInto('sift_instance')
      .values({ id: i.id, host: i.host, started_at: i.now, heartbeat_at: i.now })
      .execute();
  }

  /** Keeps the instance alive; false when its row is gone (another instance found it lost). */
  async heartbeat(id: string, now: number): Promise<boolean> {
    const r = await this.q
      .updateTable('sift_instance')
      .set({ heartbeat_at: now })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async removeInstance(id: string): Promise<void> {
    await this.q.deleteFrom('sift_instance').where('id', '=', id).execute();
  }
}
