import { sql, type Kysely } from 'kysely';
import type { EventType } from '../common/job-status';
import { TimeSlicer } from '../common/time-slice';
import type { Tx } from './db';
import { INSERT_CHUNK, type BatchEvent } from './rows';
import type { Tables } from './schema';

/** Reads of the batch_event table: each job's log, seq 1, 2, 3… with no gaps. */
export class EventReader {
  constructor(protected readonly q: Kysely<Tables>) {}

  async batchEvents(jobId: string, after: number, limit: number): Promise<BatchEvent[]> {
    const rows = await this.q
      .selectFrom('batch_event')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ jobId: r.job_id, seq: r.seq, type: r.type, at: r.at, data: r.data }));
  }

  /** How many of the job's events are of each of `types`. */
  async countTypes(jobId: string, types: readonly EventType[]): Promise<Record<string, number>> {
    const rows = await this.q
      .selectFrom('batch_event')
      .select(['type', (eb) => eb.fn.countAll<number>().as('n')])
      .where('job_id', '=', jobId)
      .where('type', 'in', types)
      .groupBy('type')
      .execute();
    return Object.fromEntries(types.map((t) => [t, Number(rows.find((r) => r.type === t)?.n ?? 0)]));
  }
}

/** The writer of batch_event, inside a transaction. */
export class EventRepository extends EventReader {
  constructor(private readonly tx: Tx) {
    super(tx.q);
  }

  /**
   * Appends an event with the job's next sequence number. Returns the seq, and the job's targets
   * left (total less done) as the event's statement sees them: every earlier statement of the
   * transaction, the count triggers included. With `notify`, on PostgreSQL the same statement sends
   * a NOTIFY on the channel, delivered when (and only if) the transaction commits: an event and its
   * signal cost one round trip. SQLite has nobody to tell.
   */
  async appendEvent(
    e: { jobId: string; type: EventType; at: number; data?: object },
    notify?: { channel: string; payload: string },
  ): Promise<{ seq: number; left: number }> {
    // The next seq is read in the insert itself. On PostgreSQL two writers of one job's events are
    // serialized by the job row, which every writer of an event updates first in its transaction.
    const insert = this.q
      .insertInto('batch_event')
      .values({
        job_id: e.jobId,
        seq: (eb) =>
          eb
            .selectFrom('batch_event')
            .select(sql<number>`coalesce(max(seq), 0) + 1`.as('next'))
            .where('job_id', '=', e.jobId),
        type: e.type,
        at: e.at,
        data: JSON.stringify(e.data ?? {}),
      })
      .returning((eb) => [
        'seq',
        eb
          .selectFrom('batch_job')
          .select(sql<number>`targets_total - targets_done`.as('left'))
          .where('id', '=', e.jobId)
          .as('left'),
      ]);
    const row =
      !notify || !this.tx.pg
        ? await insert.executeTakeFirstOrThrow()
        : await this.q
            .with('e', () => insert)
            .selectFrom('e')
            .select(['e.seq', 'e.left', sql`pg_notify(${notify.channel}, ${notify.payload})`.as('sent')])
            .executeTakeFirstOrThrow();
    return { seq: row.seq, left: Number(row.left ?? 0) };
  }

  /**
   * Appends events of one job with its next sequence numbers, in order: a statement per
   * INSERT_CHUNK events (with turns of the event loop once `slicer`'s slice is spent) instead of
   * one each, and one NOTIFY for them all. Writers of one job are kept apart as for appendEvent.
   * Returns their seqs.
   */
  async appendEvents(
    jobId: string,
    events: { type: EventType; at: number; data?: object }[],
    notify?: { channel: string; payload: string },
    slicer = new TimeSlicer(),
  ): Promise<number[]> {
    if (events.length === 0) return [];
    const last = await this.q
      .selectFrom('batch_event')
      .select(sql<number>`coalesce(max(seq), 0)`.as('n'))
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    const first = Number(last.n) + 1;
    for (let i = 0; i < events.length; i += INSERT_CHUNK) {
      if (slicer.due()) await slicer.turn();
      const part = events.slice(i, i + INSERT_CHUNK);
      await this.q
        .insertInto('batch_event')
        .values(
          part.map((e, k) => ({
            job_id: jobId,
            seq: first + i + k,
            type: e.type,
            at: e.at,
            data: JSON.stringify(e.data ?? {}),
          })),
        )
        .execute();
    }
    if (notify && this.tx.pg)
      await sql`SELECT pg_notify(${notify.channel}, ${notify.payload})`.execute(this.q);
    return events.map((_, k) => first + k);
  }
}
