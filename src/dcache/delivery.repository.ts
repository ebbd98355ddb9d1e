import type { ExpressionBuilder } from 'kysely';
import { TimeSlicer } from '../common/time-slice';
import type { Tx } from './db';
import { claimDeliveries, type DeliveryClaim } from './delivery-claim';
import { DeliveryReader, type ClaimedDelivery, type DeliveryWrite, type Webhook } from './delivery.reader';
import type { Tables } from './schema';

export {
  DeliveryReader,
  type ClaimedDelivery,
  type Delivery,
  type DeliveryWrite,
  type Webhook,
} from './delivery.reader';

/** A delivery row's own bytes beside its payload (keys, state, index entries). */
const DELIVERY_ROW_BYTES = 128;
/** Deliveries one insert statement writes (a payload is a job's view and an event, about 1 KB). */
const DELIVERY_ROWS = 100;

/** The writers of batch_webhook and batch_delivery, inside a transaction. */
export class DeliveryRepository extends DeliveryReader {
  constructor(private readonly tx: Tx) {
    super(tx.q);
  }

  /**
   * Takes due deliveries for `holder`, callers in turn (see delivery-claim.ts). Call after
   * lockDeliveries, so two instances never take one delivery.
   */
  claimDeliveries(c: DeliveryClaim): Promise<ClaimedDelivery[]> {
    return claimDeliveries(this.tx, c);
  }

  async putWebhook(jobId: string, w: Webhook): Promise<void> {
    await this.q
      .insertInto('batch_webhook')
      .values({ job_id: jobId, url: w.url, secret: w.secret, events: JSON.stringify(w.events) })
      .execute();
  }

  /** Queues the event for the job's webhook (see putDeliveries). */
  async putDelivery(d: {
    jobId: string;
    seq: number;
    type: string;
    payload: string;
    now: number;
    callerKey: string;
  }): Promise<void> {
    await this.putDeliveries(d.jobId, d.callerKey, [d]);
  }

  /**
   * Queues events of one job for its webhook, in seq order: the first due at once when no earlier
   * delivery of the job is pending, the others after it (see finishDelivery). A statement per
   * DELIVERY_ROWS deliveries, with turns of the event loop once `slicer`'s slice is spent. Their
   * payloads count in the job's bytes.
   */
  async putDeliveries(
    jobId: string,
    callerKey: string,
    ds: { seq: number; type: string; payload: string; now: number }[],
    slicer = new TimeSlicer(),
  ): Promise<void> {
    if (ds.length === 0) return;
    const ahead = await this.q
      .selectFrom('batch_delivery')
      .select('seq')
      .where('job_id', '=', jobId)
      .where('state', '=', 'pending')
      .limit(1)
      .executeTakeFirst();
    let bytes = 0;
    for (let i = 0; i < ds.length; i += DELIVERY_ROWS) {
      if (slicer.due()) await slicer.turn();
      const part = ds.slice(i, i + DELIVERY_ROWS);
      await this.q
        .insertInto('batch_delivery')
        .values(
          part.map((d, k) => {
            bytes += Buffer.byteLength(d.payload) + DELIVERY_ROW_BYTES;
            return {
              job_id: jobId,
              seq: d.seq,
              type: d.type,
              payload: d.payload,
              state: 'pending' as const,
              created_at: d.now,
              next_attempt_at: d.now,
              last_status: null,
              last_error: null,
              last_message: null,
              holder: null,
              caller_key: callerKey,
              due_at: ahead || i + k > 0 ? null : d.now,
            };
          }),
        )
        .execute();
    }
    await this.q
      .updateTable('batch_job')
      .set((eb) => ({ row_bytes: eb('row_bytes', '+', bytes) }))
      .where('id', '=', jobId)
      .execute();
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
    if (w.state !== 'delivered') return (await this.finishDelivery(w)) ? undefined : false;
    if (!(await this.writeOutcome(w))) return false;
    // Taken at once when its attempt is due: what promoting it first and then taking it would do,
    // in one statement. Else it is promoted, due when its attempt is.
    const next = await this.takeHead(w.jobId, w.holder, 'next_attempt_at', now);
    if (!next) await this.promoteHead(w.jobId);
    return next;
  }

  /**
   * Takes for `holder` the job's next delivery (its first pending one), when it is due and no one
   * holds it. Undefined when there is none.
   */
  takeNextDelivery(
    jobId: string,
    holder: string,
    now: number,
  ): Promise<Pick<ClaimedDelivery, 'seq' | 'payload' | 'attempts' | 'createdAt'> | undefined> {
    return this.takeHead(jobId, holder, 'due_at', now);
  }

  /** The job's first pending delivery, for `holder`, when no one holds it and `when` <= now. */
  private async takeHead(
    jobId: string,
    holder: string,
    when: 'due_at' | 'next_attempt_at',
    now: number,
  ): Promise<Pick<ClaimedDelivery, 'seq' | 'payload' | 'attempts' | 'createdAt'> | undefined> {
    const next = await this.q
      .updateTable('batch_delivery')
      .set((eb) => ({ holder, attempts: eb('attempts', '+', 1), due_at: null }))
      .where('job_id', '=', jobId)
      .where('seq', '=', (eb) => firstPending(eb, jobId))
      .where('holder', 'is', null)
      .where(when, '<=', now)
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

  /**
   * Writes how an attempt ended, only while `holder` still holds the delivery. Pending again, it
   * is due at its next attempt; delivered or given up, the job's next pending one becomes due.
   */
  async finishDelivery(w: DeliveryWrite): Promise<boolean> {
    if (!(await this.writeOutcome(w))) return false;
    if (w.state !== 'pending') await this.promoteHead(w.jobId);
    return true;
  }

  /** The attempt's outcome, written while `holder` holds the delivery; false when it does not. */
  private async writeOutcome(w: DeliveryWrite): Promise<boolean> {
    const r = await this.q
      .updateTable('batch_delivery')
      .set({
        state: w.state,
        next_attempt_at: w.nextAttemptAt,
        last_status: w.lastStatus,
        last_error: w.lastError,
        last_message: w.lastMessage,
        holder: null,
        due_at: w.state === 'pending' ? w.nextAttemptAt : null,
      })
      .where('job_id', '=', w.jobId)
      .where('seq', '=', w.seq)
      .where('holder', '=', w.holder)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** The job's first pending delivery, unless an instance holds it, is due at its next attempt. */
  private async promoteHead(jobId: string): Promise<void> {
    await this.q
      .updateTable('batch_delivery')
      .set((eb) => ({ due_at: eb.ref('next_attempt_at') }))
      .where('job_id', '=', jobId)
      .where('seq', '=', (eb) => firstPending(eb, jobId))
      .where('holder', 'is', null)
      .execute();
  }

  /** Deliveries held by `holder` (every holder when not given) are free to be sent again. */
  async releaseDeliveries(holder?: string): Promise<number> {
    // What was held is its job's first pending delivery: due again at its next attempt.
    let q = this.q
      .updateTable('batch_delivery')
      .set((eb) => ({ holder: null, due_at: eb.ref('next_attempt_at') }));
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
    const n = Number((await q.executeTakeFirst()).numUpdatedRows);
    // Of those, only the first pending one is due (and none while an earlier one is being sent).
    await this.q
      .updateTable('batch_delivery')
      .set({ due_at: null })
      .where('job_id', '=', jobId)
      .where('holder', 'is', null)
      .execute();
    await this.promoteHead(jobId);
    return n;
  }
}

/** The seq of the job's first pending delivery (index batch_delivery_head). */
function firstPending(eb: ExpressionBuilder<Tables, 'batch_delivery'>, jobId: string) {
  return eb
    .selectFrom('batch_delivery as f')
    .select((e) => e.fn.min('f.seq').as('seq'))
    .where('f.job_id', '=', jobId)
    .where('f.state', '=', 'pending');
}
