import { sql, type Kysely } from 'kysely';
import { DELIVERY_STATES, type DeliveryState } from '../common/job-status';
import type { Tables } from './schema';

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
  /** The caller as `class:name` (callerKeyOf): its share of the sender and its DNS bucket. */
  callerKey: string;
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
 * pending delivery (lowest seq) is ever sent, so a receiver gets them in seq order: that one alone
 * has a `due_at` while no instance holds it, and the claim (delivery-claim.ts) reads only those.
 */
export class DeliveryReader {
  constructor(protected readonly q: Kysely<Tables>) {}

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

  /**
   * The caller's deliveries still to be sent (pending), counted up to `atMost` (index
   * batch_delivery_caller_pending: the count stops there).
   */
  async pendingOf(callerKey: string, atMost: number): Promise<number> {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM (
        SELECT 1 FROM batch_delivery WHERE caller_key = ${callerKey} AND state = 'pending' LIMIT ${atMost}
      ) AS p`.execute(this.q);
    return Number(r.rows[0].n);
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
