import { sql } from 'kysely';
import type { EventType } from '../batch/job-status';
import type { BatchEvent } from './batch-rows';
import { TargetRows } from './target-rows';

/** The batch_event table: each job's log, seq 1, 2, 3… with no gaps. */
export abstract class EventRows extends TargetRows {
  /** Appends an event with the job's next sequence number; returns the seq. */
  async appendEvent(e: { jobId: string; type: EventType; at: number; data?: object }): Promise<number> {
    const row = await this.db
      .insertInto('batch_event')
      .columns(['job_id', 'seq', 'type', 'at', 'data'])
      .expression(
        this.db
          .selectFrom('batch_event')
          .select([
            sql.val(e.jobId).as('job_id'),
            sql<number>`coalesce(max(seq), 0) + 1`.as('seq'),
            sql.val(e.type).as('type'),
            sql.val(e.at).as('at'),
            sql.val(JSON.stringify(e.data ?? {})).as('data'),
          ])
          .where('job_id', '=', e.jobId),
      )
      .returning('seq')
      .executeTakeFirstOrThrow();
    return row.seq;
  }

  async batchEvents(jobId: string, after: number, limit: number): Promise<BatchEvent[]> {
    const rows = await this.db
      .selectFrom('batch_event')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ jobId: r.job_id, seq: r.seq, type: r.type, at: r.at, data: r.data }));
  }
}
