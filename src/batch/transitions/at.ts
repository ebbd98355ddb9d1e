import type { Tx } from '../../dcache';
import type { JobEvents } from '../job-events';
import type { JobSignals } from '../job-signals';

/**
 * Where a transition runs: its transaction (which it may extend with onCommit), the one way to
 * append the job's events, the in-process signals it sends once that commits, and its time.
 */
export interface At {
  tx: Tx;
  events: JobEvents;
  signals: JobSignals;
  /** Unix seconds, precise (Clock.preciseNow). */
  now: number;
}
