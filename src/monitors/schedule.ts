import '../tuning/luxon';
import { CronTime, validateCronExpression } from 'cron';
import { invalidRequest } from '../common/errors';

/** When a monitor runs: a cron expression in UTC, or every so many seconds. */
export type Schedule = { cron: string } | { everyS: number };

/** Occurrences of a cron expression looked at for its shortest gap. */
const GAPS_CHECKED = 100;

/** 400 for an expression the cron library does not read. */
export function checkCron(expr: string): void {
  const v = validateCronExpression(expr);
  if (!v.valid)
    throw invalidRequest(
      `schedule "${expr.slice(0, 80)}" is not a cron expression`,
      'give 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, such as "*/15 * * * *"',
    );
}

/** The shortest time between two runs, in seconds (of a cron expression: over its next 100). */
export function shortestGapS(s: Schedule, fromMs: number): number {
  if ('everyS' in s) return s.everyS;
  const t = new CronTime(s.cron, 'UTC');
  let prev = fromMs;
  let gap = Infinity;
  for (let i = 0; i <= GAPS_CHECKED; i++) {
    const at = t.getNextDateFrom(new Date(prev), 'UTC').toMillis();
    if (i > 0) gap = Math.min(gap, (at - prev) / 1000);
    prev = at;
  }
  return gap;
}

/**
 * The slot after `now` (Unix ms). With every_s the slots keep their cadence from the one just
 * due; slots passed meanwhile (every instance was down) are skipped, so a late run happens once.
 */
export function nextSlot(s: Schedule, dueMs: number, nowMs: number): number {
  if ('everyS' in s) {
    const step = s.everyS * 1000;
    return dueMs + Math.max(1, Math.floor((nowMs - dueMs) / step) + 1) * step;
  }
  return new CronTime(s.cron, 'UTC').getNextDateFrom(new Date(nowMs), 'UTC').toMillis();
}

/** The first slot of a new or resumed monitor: a cron's next, or now for every_s. */
export function firstSlot(s: Schedule, nowMs: number): number {
  return 'everyS' in s ? nowMs : nextSlot(s, nowMs, nowMs);
}
