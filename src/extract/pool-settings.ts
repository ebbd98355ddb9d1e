import * as os from 'node:os';
import { SiftError } from '../common/errors';

// What an extraction pool (extract-pool.ts) is made with, and its answer when its queue is full.

export const DEFAULT_EXTRACT_TIMEOUT_MS = 20_000;
/**
 * Extraction threads by default: one per core, at most four. On two cores, one worker (leaving a
 * core to the main thread) made a 10,000-target job's peak memory 20-28 MB lower and batch jobs
 * 10-20 % slower (bench/batch): SIFT_EXTRACT_WORKERS=1 makes that trade.
 */
export const defaultExtractWorkers = () => Math.max(1, Math.min(4, os.availableParallelism()));

export interface ExtractPoolOptions {
  /** Worker threads; 0 extracts inline; by default defaultExtractWorkers(). */
  size?: number;
  timeoutMs?: number;
  heapMb?: number;
  /** Pages that may wait for a worker; past it, callers that do not wait get 503 server_busy. */
  maxQueue?: number;
  /** The module whose extractHtml the workers run (tests give one that fails on purpose). */
  module?: string;
}

export const serverBusy = () =>
  new SiftError(
    503,
    'server_busy',
    'sift has as many pages waiting for extraction as it may queue',
    'try again in a few seconds',
  ).retryAfter(5);
