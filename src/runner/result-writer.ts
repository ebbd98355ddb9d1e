import type { TargetOutcome } from '../batch/job-lifecycle';
import type { PageFindings } from '../crawl';

/** Results written in one transaction, at most. */
const RECORD_GROUP = 64;
/**
 * How long a result waits for others to share its commit: results rarely end during another's
 * write, so without it each had a transaction of its own.
 */
const RECORD_LINGER_MS = 5;

export interface ResultToWrite {
  jobId: string;
  idx: number;
  outcome: TargetOutcome;
  /** May be its job's last: the group commits durably. */
  mayEnd: boolean;
  /** A crawl's page: what it adds to its job. */
  found?: PageFindings;
}

interface QueuedResult extends ResultToWrite {
  /** Written in a transaction of its own (the group it was in failed). */
  alone?: boolean;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface ResultWriterPorts {
  /** Writes one group in one transaction (holder-checked): whether each result was written. */
  write(group: ResultToWrite[], durable: boolean): Promise<boolean[]>;
  /** After a group was written. */
  written(group: ResultToWrite[], written: boolean[]): Promise<void>;
  /** A failed write: true when it is to be tried again (after a second), false to give it up. */
  retryAfter(err: unknown): boolean;
}

/**
 * The runner's group commit: the results that end within RECORD_LINGER_MS of each other, or while
 * a write is under way, are written in one transaction per job. A result is never dropped for a
 * full or unreachable database: its write is tried again (the same group first, so results keep
 * their order) until it goes through.
 */
export class ResultWriter {
  private readonly queue: QueuedResult[] = [];
  private writing?: Promise<void>;

  constructor(private readonly ports: ResultWriterPorts) {}

  /** Queues a result for the next group commit; resolves once it is written. */
  record(r: ResultToWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...r, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.writing || this.queue.length === 0) return;
    this.writing = new Promise((r) => setTimeout(r, RECORD_LINGER_MS))
      .then(() => this.writeGroups())
      .finally(() => {
        this.writing = undefined;
        this.kick(); // queued after the last look
      });
  }

  private async writeGroups(): Promise<void> {
    while (this.queue.length > 0) {
      // One job per group: a transaction then locks one job row, as a single result's does; two
      // groups locking two jobs' rows in opposite orders would deadlock on PostgreSQL.
      const first = this.queue.shift()!;
      const group = [first];
      for (let i = 0; !first.alone && i < this.queue.length && group.length < RECORD_GROUP;) {
        const r = this.queue[i];
        if (r.jobId === first.jobId && !r.alone) group.push(...this.queue.splice(i, 1));
        else i++;
      }
      try {
        const written = await this.writeGroup(group);
        await this.ports.written(group, written);
        for (const r of group) r.resolve();
      } catch (err) {
        if (group.length === 1) {
          first.reject(err as Error);
          continue;
        }
        // The group failed as a whole: each of its results is tried alone, so a bad write costs one.
        this.queue.unshift(...group.map((r) => ({ ...r, alone: true })));
      }
    }
  }

  private async writeGroup(group: QueuedResult[]): Promise<boolean[]> {
    for (;;) {
      try {
        return await this.ports.write(
          group,
          group.some((r) => r.mayEnd),
        );
      } catch (err) {
        if (!this.ports.retryAfter(err)) throw err;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
}
