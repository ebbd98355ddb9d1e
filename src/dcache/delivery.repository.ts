import { sql, type Kysely } from 'kysely';
import { DELIVERY_STATES, type DeliveryState } from '../common/job-status';
import type { Tx } from './db';
import type { DB } from './schema';

export interface Webhook {
  url: string;
  secret: string;
  events: string[];
}

export interface Delivery {
  jobId: string;
  seq: number;
  type: string;
  state: DeliveryState;
  attempts: number;
  createdAt: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  lastMessage: string | null;
}

/** A delivery taken to be sent now, with what sending it needs. */
export interface ClaimedDelivery {
  jobId: string;
  seq: number;
  payload: string;
  /** This one included. */
  attempts: number;
  createdAt: number;
  url: string;
  secret: string;
  caller: string;
  callerClass: string;
}

/** How an attempt ended: delivered, to be tried again at nextAttemptAt, or given up. */
export interface DeliveryWrite {
  jobId: string;
  seq: number;
  holder: string;
  state: DeliveryState;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  lastMessage: string | null;
}

/**
 * Reads of the batch_webhook and batch_delivery tables: a job's webhook, and the outbox of the events it is
 * to be sent, one row per event written in the event's transaction. Per job, only the first
 * pending delivery (lowest seq) is ever sent, so a receiver gets them in seq order.
 */
export class DeliveryReader {
  constructor(protected readonly q: Kysely<DB>) {}

  async webhookOf(jobId: string): Promise<Webhook | undefined> {
    const r = await this.q
      .selectFrom('batch_webhook')
      .selectAll()
      .where('job_id', '=', jobId)
      .executeTakeFirst();
    return r && { url: r.url, secret: r.secret, events: JSON.parse(r.events) as string[] };
  }

  async deliveries(jobId: string, after: number, limit: number): Promise<Delivery[]> {
    const rows = await this.q
      .selectFrom('batch_delivery')
      .select([
        'job_id',
        'seq',
        'type',
        'state',
        'attempts',
        'created_at',
        'next_attempt_at',
        'last_status',
        'last_error',
        'last_message',
      ])
      .where('job_id', '=', jobId)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      jobId: r.job_id,
      seq: r.seq,
      type: r.type,
      state: r.state,
      attempts: r.attempts,
      createdAt: r.created_at,
      nextAttemptAt: r.next_attempt_at,
      lastStatus: r.last_status,
      lastError: r.last_error,
      lastMessage: r.last_message,
    }));
  }

  /** Deliveries per state, over all jobs (for /metrics). */
  async deliveryCounts(): Promise<Record<DeliveryState, number>> {
    const rows = await this.q
      .selectFrom('batch_delivery')
      .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('state')
      .execute();
    const counts = Object.fromEntries(DELIVERY_STATES.map((st) => [st, 0])) as Record<DeliveryState, number>;
    for (const r of rows) counts[r.state] = Number(r.n);
    return counts;
  }
}

/** The writers of batch_webhook and batch_delivery, inside a transaction. */
export class DeliveryRepository extends DeliveryReader {
  constructor(tx: Tx) {
    super(tx.q);
  }

  async putWebhook(jobId: string, w: Webhook): Promise<void> {
    await this.q
      .insertInto('batch_webhook')
      .values({ job_id: jobId, url: w.url, secret: w.secret, events: JSON.stringify(w.events) })
      .execute();
  }

  async putDelivery(d: { jobId: string; seq: number; type: string; payload: string; now: number }) {
    await this.q
      .insertInto('batch_delivery')
      .values({
        job_id: d.jobId,
        seq: d.seq,
        type: d.type,
        payload: d.payload,
        state: 'pending',
        created_at: d.now,
        next_attempt_at: d.now,
        last_status: null,
        last_error: null,
        last_message: null,
        holder: null,
      })
      .execute();
  }

  /**
   * Takes up to `limit` deliveries due at `now` for `holder`: of each job, its first pending one,
   * if no instance holds it. Each counts one more attempt. Call after lockDeliveries, so two instances never take one delivery.
   */
  async claimDeliveries(c: { holder: string; now: number; limit: number }): Promise<ClaimedDelivery[]> {
    // Due ones in time order, each kept only if no earlier one of its job is pending (indexes:
    // batch_delivery_due for the first, batch_delivery_head for the second).
    const heads = await sql<{ job_id: string; seq: number }>`
      SELECT d.job_id, d.seq FROM batch_delivery AS d
      WHERE d.state = 'pending' AND d.next_attempt_at <= ${c.now} AND d.holder IS NULL
        AND NOT EXISTS (SELECT 1 FROM batch_delivery AS e
                        WHERE e.job_id = d.job_id AND e.state = 'pending' AND e.seq < d.seq)
      ORDER BY d.next_attempt_at, d.job_id, d.seq LIMIT ${c.limit}`.execute(this.q);
    const out: ClaimedDelivery[] = [];
    for (const h of heads.rows) {
      const r = await this.q
        .updateTable('batch_delivery')
        .set((eb) => ({ holder: c.holder, attempts: eb('attempts', '+', 1) }))
        .where('job_id', '=', h.job_id)
        .where('seq', '=', h.seq)
        // Read again at the update: one finished (and released) meanwhile is not taken again.
        .where('state', '=', 'pending')
        .where('holder', 'is', null)
        .returning(['payload', 'attempts', 'created_at'])
        .executeTakeFirst();
      const hook = r && (await this.webhookOf(h.job_id));
      const job =
        hook &&
        (await this.q
          .selectFrom('batch_job')
          .select(['caller', 'caller_class'])
          .where('id', '=', h.job_id)
          .executeTakeFirst());
      if (!r || !hook || !job) continue;
      out.push({
        jobId: h.job_id,
        seq: Number(h.seq),
        payload: r.payload,
        attempts: r.attempts,
        createdAt: r.created_at,
        url: hook.url,
        secret: hook.secret,
        caller: job.caller,
        callerClass: job.caller_class,
      });
    }
    return out;
  }

  /**
   * Writes how an attempt ended and, when it was delivered, takes the job's next pending
   * delivery for the same holder if it is due and free: a job's deliveries go one after another
   * without a new claim. Undefined when there is none to take; false when `holder` no longer
   * held the delivery (nothing written).
   */
  async finishAndTakeNext(
    w: DeliveryWrite,
    now: number,
  ): Promise<false | Pick<ClaimedDelivery, 'seq' | 'payload' | 'attempts' | 'createdAt'> | undefined> {
    if (!(await this.finishDelivery(w))) return false;
    if (w.state !== 'delivered') return undefined;
    return this.takeNextDelivery(w.jobId, w.holder, now);
  }

  /**
   * Takes for `holder` the job's next delivery (its first pending one), when it is due and no one
   * holds it. Undefined when there is none.
   */
  async takeNextDelivery(
    jobId: string,
    holder: string,
    now: number,
  ): Promise<Pick<ClaimedDelivery, 'seq' | 'payload' | 'attempts' | 'createdAt'> | undefined> {
    const next = await this.q
      .updateTable('batch_delivery')
      .set((eb) => ({ holder, attempts: eb('attempts', '+', 1) }))
      .where('job_id', '=', jobId)
      .where('seq', '=', (eb) =>
        eb
          .selectFrom('batch_delivery')
          .select((e) => e.fn.min('seq').as('seq'))
          .where('job_id', '=', jobId)
          .where('state', '=', 'pending'),
      )
      .where('holder', 'is', null)
      .where('next_attempt_at', '<=', now)
      .returning(['seq', 'payload', 'attempts', 'created_at'])
      .executeTakeFirst();
    return (
      next && {
        seq: Number(next.seq),
        payload: next.payload,
        attempts: next.attempts,
        createdAt: next.created_at,
      }
    );
  }

  /** Writes how an attempt ended, only while `holder` still holds the delivery. */
  async finishDelivery(w: DeliveryWrite): Promise<boolean> {
    const r = await this.q
      .updateTable('batch_delivery')
      .set({
        state: w.state,
        next_attempt_at: w.nextAttemptAt,
        last_status: w.lastStatus,
        last_error: w.lastError,
        last_message: w.lastMessage,
        holder: null,
      })
      .where('job_id', '=', w.jobId)
      .where('seq', '=', w.seq)
      .where('holder', '=', w.holder)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Deliveries held by `holder` (every holder when not given) are free to be sent again. */
  async releaseDeliveries(holder?: string): Promise<number> {
    let q = this.q.updateTable('batch_delivery').set({ holder: null });
    q = holder === undefined ? q.where('holder', 'is not', null) : q.where('holder', '=', holder);
    return Number((await q.executeTakeFirst()).numUpdatedRows);
  }

  /**
   * The job's deliveries that are not delivered (every one with `all`) are sent again from now on,
   * their attempts counted afresh; one being sent right now is left to finish. Returns how many.
   */
  async redeliver(jobId: string, now: number, all: boolean): Promise<number> {
    let q = this.q
      .updateTable('batch_delivery')
      .set({ state: 'pending', attempts: 0, next_attempt_at: now })
      .where('job_id', '=', jobId)
      .where('holder', 'is', null);
    if (!all) q = q.where('state', '!=', 'delivered');
    return Number((await q.executeTakeFirst()).numUpdatedRows);
  }
}
