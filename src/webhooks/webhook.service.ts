import { createHmac } from 'node:crypto';
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { AppConfig, type CallerClass } from '../config/app-config';
import { SerialPass } from '../common/serial-pass';
import { untilStored } from '../common/until-stored';
import { Clock } from '../common/clock';
import { SiftError } from '../common/errors';
import { Metrics } from '../common/metrics';
import { JobSignals } from '../batch/job-signals';
import type { DeliveryState } from '../common/job-status';
import { Db, lockDeliveries, lockJob, type ClaimedDelivery } from '../dcache';
import { Fetcher } from '../fetch/fetcher';
import { isUnresolved } from '../fetch/address-policy';

/** Bytes of a receiver's answer read, at most. */
const MAX_ANSWER = 4096;
/** How often due deliveries (retries, those another instance left) are looked for. */
const POLL_MS = 1000;
/** How long a job's sending waits for its next event before it ends (see nextQueued). */
const LINGER_MS = 50;

/**
 * The most of `concurrency` sender slots one caller may hold: all but a quarter, kept for the
 * other callers, so a delivery of theirs that comes due starts at once even while one caller's
 * receiver holds every attempt to its timeout. Under 4 slots there is no quarter to keep: a caller
 * may use them all (SIFT_WEBHOOK_CONCURRENCY=2 sends two at once).
 */
export function perCallerSlots(concurrency: number): number {
  return concurrency >= 4 ? concurrency - Math.floor(concurrency / 4) : concurrency;
}

interface Outcome {
  state: DeliveryState;
  lastStatus: number | null;
  lastError: string | null;
  lastMessage: string | null;
}

/**
 * Sends the webhook outbox: each delivery signed as Standard Webhooks says, to the job's URL under
 * its caller's address policy, at most one at a time per job and in seq order (the store hands out
 * only a job's first pending one), retried by SIFT_WEBHOOK_RETRY_S until delivered or given up.
 * A delivery is held by this instance while it is sent; a restart (SQLite) or the recovery of a
 * lost instance (PostgreSQL) frees what a dead one held, so none is lost.
 */
@Injectable()
export class WebhookService implements BeforeApplicationShutdown {
  private readonly log = new Logger('webhook');
  /** Jobs whose deliveries this instance is sending now, and whose caller (callerKey) each is. */
  private readonly sending = new Map<string, { ac: AbortController; callerKey: string }>();
  private readonly tasks = new Set<Promise<void>>();
  /** Jobs whose sending waits a moment for their next event (see sendJob), and how to wake each. */
  private readonly waiting = new Map<string, () => void>();
  private stopped = true;
  private readonly filling = new SerialPass(
    () => this.fill(),
    (err) => this.log.error(`claiming deliveries failed: ${err.message}`),
  );
  private timer?: NodeJS.Timeout;
  /** This instance's id: what it holds while sending is marked with it. */
  private holder = '';

  constructor(
    private readonly db: Db,
    private readonly fetcher: Fetcher,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    signals: JobSignals,
  ) {
    // A job being sent here goes on by itself (see sendJob); any other may be claimable now.
    signals.onDeliveryQueued((jobId) => {
      const wake = this.waiting.get(jobId);
      if (wake) wake();
      else if (!this.sending.has(jobId)) this.pump();
    });
  }

  /**
   * Starts sending as instance `holder`: called once the instance is registered and restart
   * reconciliation has freed old holds (see RunnerService).
   */
  start(holder: string): void {
    if (this.timer) return;
    this.holder = holder;
    this.stopped = false;
    this.timer = setInterval(() => this.pump(), POLL_MS);
    this.timer.unref();
    this.pump();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Aborts what is being sent and frees it for the next start or another instance. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.stoppedSending = this.sending.size;
    for (const { ac } of this.sending.values()) ac.abort();
    await Promise.allSettled([...this.tasks]);
    if (!this.holder) return;
    await this.db.transaction((tx) => tx.deliveries.releaseDeliveries(this.holder)).catch(() => undefined);
  }

  /** Deliveries being sent when the last stop came: aborted, and due again for the next start. */
  stoppedSending = 0;

  /** Takes due deliveries up to the free slots. Re-entrant calls fold into one more pass. */
  pump(): void {
    if (!this.stopped) this.filling.run();
  }

  /**
   * Callers take the free slots in turn (the one holding fewest first), none more than
   * perCallerSlots: one caller's queue never holds back another's deliveries.
   */
  private async fill(): Promise<void> {
    const free = this.config.webhookConcurrency - this.sending.size;
    if (this.stopped || free <= 0) return;
    const now = this.clock.preciseNow();
    const held = new Map<string, number>();
    for (const { callerKey } of this.sending.values()) held.set(callerKey, (held.get(callerKey) ?? 0) + 1);
    const perCaller = perCallerSlots(this.config.webhookConcurrency);
    const claimed = await this.db.transaction(async (tx) => {
      await lockDeliveries(tx);
      return tx.deliveries.claimDeliveries({ holder: this.holder, now, limit: free, held, perCaller });
    });
    for (const d of claimed) this.sendJob(d);
  }

  /**
   * Sends the claimed delivery, then the job's next ones as long as each is delivered and the next
   * is due: one job's deliveries go one after another, in seq order, without a new claim each.
   */
  private sendJob(first: ClaimedDelivery): void {
    const ac = new AbortController();
    this.sending.set(first.jobId, { ac, callerKey: first.callerKey });
    const task = (async () => {
      const signer = signerFor(first.secret);
      let d: ClaimedDelivery | undefined = first;
      while (d && !ac.signal.aborted) {
        const outcome = await this.send(d, signer, ac.signal);
        if (!outcome) return;
        // The outcome is kept through a database outage: a delivery left "sending" here would
        // wait for this instance to stop.
        const write = { jobId: d.jobId, seq: d.seq, holder: this.holder, ...outcome };
        const next = await untilStored(
          // Under the job's row, as every event writer is: an event queued meanwhile is either
          // seen here (and made due) or sees this delivery finished (and is due at once).
          () =>
            this.db.transaction(async (tx) => {
              await lockJob(tx, write.jobId);
              return tx.deliveries.finishAndTakeNext(write, this.clock.preciseNow());
            }),
          { gaveUp: () => this.stopped },
        );
        if (next !== false) {
          this.metrics.webhookAttempts.inc({
            outcome: outcome.state === 'pending' ? 'retry' : outcome.state,
          });
        }
        if (!next && outcome.state === 'delivered' && (await this.nextQueued(d.jobId, ac.signal))) {
          // The job's next event came while this one was sent: taken without a claim.
          const jobId: string = d.jobId;
          const now = this.clock.preciseNow();
          const taken: Partial<ClaimedDelivery> | undefined = await this.db.transaction((tx) =>
            tx.deliveries.takeNextDelivery(jobId, this.holder, now),
          );
          d = taken ? { ...d, ...taken } : undefined;
        } else {
          d = next ? { ...d, ...next } : undefined;
        }
      }
    })()
      .catch((err: Error) => this.log.error(`deliveries of ${first.jobId}: ${err.message}`))
      .finally(() => {
        this.sending.delete(first.jobId);
        this.tasks.delete(task);
        // A slot is free; and a delivery of this job queued after its last look is taken now.
        this.pump();
      });
    this.tasks.add(task);
  }

  /**
   * Waits up to LINGER_MS for the job's next event. A job's events come in a stream while it runs,
   * and each sent faster than the next comes would otherwise end its sending and start it again
   * with a claim (a transaction under the claim lock).
   */
  private nextQueued(jobId: string, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (queued: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(jobId);
        signal.removeEventListener('abort', onAbort);
        resolve(queued);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), LINGER_MS);
      this.waiting.set(jobId, () => done(true));
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** One attempt, and what it says about the next; undefined when stopped meanwhile. */
  private async send(
    d: ClaimedDelivery,
    signer: Signer,
    signal: AbortSignal,
  ): Promise<(Outcome & { nextAttemptAt: number }) | undefined> {
    const id = `${d.jobId}:${d.seq}`;
    const at = new Date(this.clock.nowMs());
    const started = performance.now();
    let outcome: Outcome;
    try {
      const res = await this.fetcher.post(d.url, {
        callerClass: d.callerClass as CallerClass,
        // The caller's one DNS bucket, the key its fetches use (class:name).
        caller: d.callerKey,
        timeoutMs: this.config.webhookTimeoutMs,
        signal,
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signer(id, at, d.payload),
        },
        body: d.payload,
        maxBody: MAX_ANSWER,
      });
      outcome =
        res.status >= 200 && res.status < 300
          ? { state: 'delivered', lastStatus: res.status, lastError: null, lastMessage: null }
          : this.retryOrGiveUp(d, {
              lastStatus: res.status,
              lastError: 'http_status',
              lastMessage: answerMessage(res.status, res.body),
            });
    } catch (err) {
      // Stopping: the delivery stays held until stop() frees it.
      if (signal.aborted) return undefined;
      const e = err instanceof SiftError ? err : undefined;
      if (!e)
        this.log.error(`delivery ${id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      const failure = {
        lastStatus: null,
        lastError: e?.code ?? 'internal',
        lastMessage: e?.message ?? 'the delivery failed inside sift; the details are in its log',
      };
      // The address policy will say the same at every attempt: given up at once. A name that did
      // not resolve (told to a restricted caller in the same words) is tried again.
      outcome =
        e?.code === 'blocked_address' && !isUnresolved(e)
          ? { state: 'failed', ...failure }
          : this.retryOrGiveUp(d, failure);
    }
    this.metrics.webhookSeconds.observe((performance.now() - started) / 1000);
    return {
      ...outcome,
      nextAttemptAt: outcome.state === 'pending' ? this.nextAttemptAt(d) : this.clock.preciseNow(),
    };
  }

  /** When the attempt after `d.attempts` is due: the schedule's delay, the last one repeating. */
  private nextAttemptAt(d: ClaimedDelivery): number {
    const delays = this.config.webhookRetryS;
    return this.clock.preciseNow() + delays[Math.min(d.attempts, delays.length) - 1];
  }

  /** Retried while the next attempt falls within SIFT_WEBHOOK_GIVE_UP_S of the event; else failed. */
  private retryOrGiveUp(d: ClaimedDelivery, failure: Omit<Outcome, 'state'>): Outcome {
    const giveUp = this.nextAttemptAt(d) > d.createdAt + this.config.webhookGiveUpS;
    return { state: giveUp ? 'failed' : 'pending', ...failure };
  }
}

type Signer = (id: string, at: Date, payload: string) => string;

/**
 * Standard Webhooks' signature: `v1,` and the base64 HMAC-SHA256, keyed with the secret's bytes
 * (after `whsec_`), of `id.timestamp.payload`. (A secret is checked to be such base64 at submit.)
 */
function signerFor(secret: string): Signer {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return (id, at, payload) =>
    `v1,${createHmac('sha256', key)
      .update(`${id}.${Math.floor(at.getTime() / 1000)}.${payload}`)
      .digest('base64')}`;
}

function answerMessage(status: number, body: string): string {
  const text = body.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `the receiver answered ${status}${text ? `: ${text}` : ''}`;
}
