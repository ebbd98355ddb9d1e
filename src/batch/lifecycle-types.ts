import type { ClaimedTarget } from '../dcache';
import type { PageFindings } from './crawl-growth';

/** Targets claimed, and whether pending ones are left. */
export interface Claim {
  targets: ClaimedTarget[];
  more: boolean;
}

/** How a fetched target ended. */
export type TargetOutcome =
  | { kind: 'done'; result: string; verdict?: string }
  | { kind: 'failed'; code: string; message: string; hint: string };

/** A target's outcome as `holder` reports it. */
export interface ResultRecord {
  jobId: string;
  idx: number;
  holder: string;
  outcome: TargetOutcome;
  /** A crawl's page: what the runner found on it (its depth at least). */
  found?: PageFindings;
}
