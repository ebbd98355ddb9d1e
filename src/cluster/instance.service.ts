import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { isStorageUnavailable } from '../common/errors';
import { JobRecovery } from '../batch/job-recovery';
import { Dcache, Db } from '../dcache';

/**
 * This process as one of the instances working on the database: a new id at every start, a row
 * with a heartbeat, and, on PostgreSQL, the recovery of instances that stopped beating.
 */
@Injectable()
export class InstanceService {
  readonly id = randomUUID();
  private readonly log = new Logger('instance');
  private timer?: NodeJS.Timeout;
  private ticking = false;
  /**
   * Since when (unix s) this instance has reached the database without a break. Before the TTL
   * has passed since then, it recovers no other instance: after an outage every heartbeat is old,
   * and the others, alive, have had no chance to beat.
   */
  private reachableSince = Number.NEGATIVE_INFINITY;
  private markStarted!: () => void;
  /** Resolves once this instance is registered (and, on SQLite, after restart reconciliation). */
  readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));

  constructor(
    private readonly db: Db,
    private readonly recovery: JobRecovery,
    private readonly dcache: Dcache,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  get backend(): 'sqlite' | 'postgres' {
    return this.dcache.backend;
  }

  /** Several instances may share the database (PostgreSQL); SQLite has one process. */
  get shared(): boolean {
    return this.backend === 'postgres';
  }

  /**
   * Registers this instance. On SQLite, earlier processes' rows are forgotten: start-up
   * reconciliation takes up their work. On PostgreSQL, the heartbeat starts and lost instances are
   * recovered now and at every beat.
   */
  async start(): Promise<void> {
    const now = this.clock.now();
    if (!this.shared) {
      await this.db.transaction(async (tx) => {
        for (const id of await tx.instances.lostInstances(Number.MAX_SAFE_INTEGER))
          await tx.instances.removeInstance(id);
      });
    }
    await this.register(now);
    if (!this.shared) return this.markStarted();
    await this.recoverLost();
    this.markStarted();
    this.timer = setInterval(() => void this.beat(), this.config.heartbeatS * 1000);
    this.timer.unref();
  }

  private register(now: number): Promise<void> {
    return this.db.transaction((tx) =>
      tx.instances.registerInstance({ id: this.id, host: os.hostname(), now }),
    );
  }

  /** One heartbeat, then the recovery of any instance lost meanwhile. */
  async beat(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock.now();
      const alive = await this.db.transaction((tx) => tx.instances.heartbeat(this.id, now));
      if (!this.dcache.reachable) {
        this.log.warn('the database answers again');
        this.reachableSince = this.clock.now();
        this.dcache.markReachable(true);
      }
      if (!alive) {
        // Declared lost (a pause longer than the TTL): its work was recovered by another instance,
        // and results it still brings are refused target by target. It comes back as a new row.
        this.log.error(`instance ${this.id} was declared lost by another instance; registering again`);
        await this.register(this.clock.now());
      }
      await this.recoverLost();
    } catch (err) {
      if (isStorageUnavailable(err)) {
        if (this.dcache.reachable)
          this.log.error(`the database cannot be reached: ${(err as Error).message}`);
        this.dcache.markReachable(false);
      } else this.log.warn(`heartbeat failed: ${(err as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }

  /** Every instance silent for longer than the TTL, recovered by whichever live instance gets there first. */
  async recoverLost(): Promise<number> {
    const cutoff = this.clock.now() - this.config.instanceTtlS;
    if (this.reachableSince > cutoff) return 0;
    let n = 0;
    for (const lost of await this.db.read.instances.lostInstances(cutoff)) {
      if (lost === this.id) continue;
      if (await this.recovery.recoverLost(lost)) n++;
    }
    return n;
  }

  /** Live instances (heartbeat within the TTL) and the targets each holds. */
  live(): Promise<{ id: string; host: string; claims: number }[]> {
    return this.db.read.instances.liveInstances(this.clock.now() - this.config.instanceTtlS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.db.transaction((tx) => tx.instances.removeInstance(this.id)).catch(() => undefined);
  }
}
