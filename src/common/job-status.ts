/**
 * Every status a job or a target can be in, and the sets the rules are written in. Every other list
 * (queries, views, OpenAPI enums, metrics, tests) is derived from these. This file imports nothing,
 * so the store reads it too.
 */

export const JOB_STATUSES = ['queued', 'running', 'done', 'partial', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Jobs with work left: never swept while their lease is kept, never byte-evicted, counted as live. */
export const LIVE_JOB_STATUSES = ['queued', 'running'] as const satisfies readonly JobStatus[];
export type LiveJobStatus = (typeof LIVE_JOB_STATUSES)[number];

/** Jobs that have ended; no event follows their last. */
export const TERMINAL_JOB_STATUSES = [
  'done',
  'partial',
  'failed',
  'cancelled',
] as const satisfies readonly JobStatus[];
export type TerminalJobStatus = (typeof TERMINAL_JOB_STATUSES)[number];

/** Jobs an idempotency key may be replayed against (a failed or cancelled one is submitted anew). */
export const REPLAYABLE_JOB_STATUSES = [
  'queued',
  'running',
  'done',
  'partial',
] as const satisfies readonly JobStatus[];

/**
 * pending → running → done | failed; a target its job's cancel found unfinished (never started, or
 * in flight: its fetch is aborted and a late result discarded) ends cancelled.
 */
export const TARGET_STATUSES = ['pending', 'running', 'done', 'failed', 'cancelled'] as const;
export type TargetStatus = (typeof TARGET_STATUSES)[number];

/** Targets that hold a result or an error and count in targets_done (the seed's targetsDone). */
export const FINISHED_TARGET_STATUSES = ['done', 'failed'] as const satisfies readonly TargetStatus[];

/** Targets that will not change again: finished, or cancelled. */
export const ENDED_TARGET_STATUSES = [
  ...FINISHED_TARGET_STATUSES,
  'cancelled',
] as const satisfies readonly TargetStatus[];

/** Targets not yet ended: what a cancel makes cancelled. */
export const UNFINISHED_TARGET_STATUSES = ['pending', 'running'] as const satisfies readonly TargetStatus[];

/** Targets a retry fetches again (an invalid URL aside). */
export const RETRYABLE_TARGET_STATUSES = ['failed', 'cancelled'] as const satisfies readonly TargetStatus[];

export const isEndedTarget = (s: string): boolean => (ENDED_TARGET_STATUSES as readonly string[]).includes(s);

export const RESTART_POLICIES = ['fail', 'retry', 'resume'] as const;
export type RestartPolicy = (typeof RESTART_POLICIES)[number];
export const DEFAULT_RESTART_POLICY: RestartPolicy = 'fail';

export const EVENT_TYPES = [
  'batch.queued',
  'batch.running',
  'target.done',
  'target.failed',
  'batch.done',
  'batch.partial',
  'batch.failed',
  'batch.cancelled',
  'batch.requeued',
  'crawl.page',
  'page.changed',
  'page.removed',
  'monitor.run.done',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What a monitor's run sends its webhook: its pages that changed or went, and its end. */
export const MONITOR_EVENTS = [
  'page.changed',
  'page.removed',
  'monitor.run.done',
] as const satisfies readonly EventType[];

/** The types a webhook gets when it names none: every batch.* type. */
export const DEFAULT_WEBHOOK_EVENTS = EVENT_TYPES.filter((t) => t.startsWith('batch.'));

/** A webhook delivery: pending (to send, or being sent), delivered (a 2xx), failed (given up). */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export const isLiveJob = (s: string): s is LiveJobStatus =>
  (LIVE_JOB_STATUSES as readonly string[]).includes(s);

export const isTerminalJob = (s: string): s is TerminalJobStatus =>
  (TERMINAL_JOB_STATUSES as readonly string[]).includes(s);

/** The event that announces a job's end is named after the status it ends in. */
export const terminalEvent = (s: TerminalJobStatus): EventType => `batch.${s}`;

export const isTerminalEvent = (type: string): boolean =>
  type.startsWith('batch.') && isTerminalJob(type.slice('batch.'.length));

/** How a job that ran out of targets ends: done when none failed, failed when all did. */
export function finalStatus(targetsTotal: number, targetsFailed: number): 'done' | 'partial' | 'failed' {
  if (targetsFailed === 0) return 'done';
  return targetsFailed >= targetsTotal ? 'failed' : 'partial';
}
