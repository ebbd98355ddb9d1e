import type { Clock } from '../../src/common/clock';
import { JobEvents } from '../../src/batch/job-events';
import { JobLifecycle } from '../../src/batch/job-lifecycle';
import { JobRecovery } from '../../src/batch/job-recovery';
import type { JobSignals } from '../../src/batch/job-signals';
import type { Dcache } from '../../src/dcache';

/** The lifecycle and the recovery on one store, sharing one event writer, as the Nest module wires them. */
export function lifecycleOf(d: Dcache, clock: Clock, signals: JobSignals) {
  const events = new JobEvents(signals);
  return {
    life: new JobLifecycle(d.db, clock, signals, events),
    recovery: new JobRecovery(d.db, clock, signals, events),
  };
}
