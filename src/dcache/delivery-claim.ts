import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tx } from './db';
import type { ClaimedDelivery } from './delivery.reader';
import type { Tables } from './schema';

/**
 * The claim of the webhook outbox. Only a delivery that can be sent has a `due_at` (its job's
 * first pending one, not held: see DeliveryRepository), so every read here is a range of the
 * index batch_delivery_caller_due (caller_key, due_at): the callers with something due, one index
 * seek each, then each one's earliest due deliveries, in index order. No statement reads or sorts
 * every due row, however many one caller has queued.
 */

export interface DeliveryClaim {
  holder: string;
  now: number;
  /** Deliveries to take, at most. */
  limit: number;
  /** Deliveries each caller (caller_key) is being sent by this holder now. */
  held?: ReadonlyMap<string, number>;
  /** The most one caller may be sent at once by this holder (none by default). */
  perCaller?: number;
}

/** Callers a claim looks at, at most: the statement that lists them stays short. */
const MAX_CALLERS = 1024;

/**
 * Takes up to `limit` due deliveries for `holder`, callers in turn: the next one always goes to
 * the caller this holder sends the fewest for (ties: the order of caller keys), none to a caller
 * at `perCaller`. Each taken delivery counts one more attempt and is no longer due.
 */
export async function claimDeliveries(tx: Tx, c: DeliveryClaim): Promise<ClaimedDelivery[]> {
  const perCaller = c.perCaller ?? Number.MAX_SAFE_INTEGER;
  const held = new Map(c.held ?? []);
  const count = (k: string) => held.get(k) ?? 0;
  const keys = (await dueCallersQuery(c.now).execute(tx.q)).rows.map((r) => r.k);
  const turns = keys.filter((k) => count(k) < perCaller);
  const queued = new Map<string, { job_id: string; seq: number }[]>();
  const out: ClaimedDelivery[] = [];
  while (out.length < c.limit && turns.length > 0) {
    // Stable: on equal counts, the key order stands.
    turns.sort((a, b) => count(a) - count(b));
    const key = turns[0];
    let heads = queued.get(key);
    if (!heads) {
      const room = Math.min(c.limit - out.length, perCaller - count(key));
      heads = await dueHeadsQuery(tx.q, key, c.now, room).execute();
      queued.set(key, heads);
    }
    const head = heads.shift();
    const taken = head && (await take(tx, head, c.holder));
    if (taken) {
      out.push(taken);
      held.set(key, count(key) + 1);
    }
    if (!head || count(key) >= perCaller) turns.shift();
  }
  return out;
}

/**
 * The callers with a delivery due at `now`, in key order: a loose scan of
 * batch_delivery_caller_due, each step the next key's first due entry.
 */
export function dueCallersQuery(now: number): RawBuilder<{ k: string }> {
  const next = (after: RawBuilder<unknown> | null) => sql`(
    SELECT d.caller_key FROM batch_delivery AS d
    WHERE d.due_at IS NOT NULL AND d.due_at <= ${now}${after ? sql` AND d.caller_key > ${after}` : sql``}
    ORDER BY d.caller_key LIMIT 1)`;
  return sql<{ k: string }>`WITH RECURSIVE due_callers(k, n) AS (
      SELECT ${next(null)}, 1
      UNION ALL
      SELECT ${next(sql.ref('due_callers.k'))}, n + 1 FROM due_callers
      WHERE due_callers.k IS NOT NULL AND n < ${MAX_CALLERS}
    )
    SELECT k FROM due_callers WHERE k IS NOT NULL`;
}

/** A caller's deliveries due at `now`, earliest first, read along batch_delivery_caller_due. */
export function dueHeadsQuery(q: Kysely<Tables>, callerKey: string, now: number, limit: number) {
  return q
    .selectFrom('batch_delivery')
    .select(['job_id', 'seq'])
    .where('caller_key', '=', callerKey)
    .where('due_at', 'is not', null)
    .where('due_at', '<=', now)
    .orderBy('due_at')
    .limit(limit);
}

/** Takes one due delivery for `holder`, with what sending it needs; undefined if taken meanwhile. */
async function take(
  tx: Tx,
  h: { job_id: string; seq: number },
  holder: string,
): Promise<ClaimedDelivery | undefined> {
  const r = await tx.q
    .updateTable('batch_delivery')
    .set((eb) => ({ holder, attempts: eb('attempts', '+', 1), due_at: null }))
    .where('job_id', '=', h.job_id)
    .where('seq', '=', h.seq)
    // Read again at the update: one taken or finished meanwhile is not taken again.
    .where('holder', 'is', null)
    .where('due_at', 'is not', null)
    .returning(['payload', 'attempts', 'created_at', 'caller_key'])
    .executeTakeFirst();
  if (!r) return undefined;
  const hook = await tx.deliveries.webhookOf(h.job_id);
  const job = await tx.q
    .selectFrom('batch_job')
    .select(['caller', 'caller_class'])
    .where('id', '=', h.job_id)
    .executeTakeFirst();
  if (!hook || !job) return undefined;
  return {
    jobId: h.job_id,
    seq: Number(h.seq),
    payload: r.payload,
    attempts: r.attempts,
    createdAt: r.created_at,
    url: hook.url,
    secret: hook.secret,
    caller: job.caller,
    callerClass: job.caller_class,
    callerKey: r.caller_key,
  };
}
