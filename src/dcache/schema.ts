import type { Generated } from 'kysely';
import type { JobStatus, RestartPolicy, TargetStatus } from '../batch/job-status';

export interface BatchJobTable {
  id: string;
  caller: string;
  caller_class: string;
  idem_key: string;
  status: JobStatus;
  error: Generated<string>;
  targets_total: number;
  targets_done: Generated<number>;
  created_at: number;
  lease: number;
  nbytes: Generated<number>;
  on_restart: Generated<RestartPolicy>;
  fingerprint: Generated<string>;
  targets_failed: Generated<number>;
}

export interface BatchTargetTable {
  job_id: string;
  idx: number;
  url: string;
  options: string;
  status: TargetStatus;
  result: string | null;
  error: string | null;
  hint: string | null;
  code: string | null;
  updated_at: number | null;
  /** The instance a running target is held by. */
  holder: Generated<string | null>;
  /** The URL's host: what the per-host limit counts. */
  host: Generated<string>;
}

export interface SiftInstanceTable {
  id: string;
  host: string;
  started_at: number;
  heartbeat_at: number;
}

export interface BatchEventTable {
  job_id: string;
  seq: number;
  type: string;
  at: number;
  data: Generated<string>;
}

export interface ClientsTable {
  fingerprint: string;
  caller: string;
  caller_class: string;
  created_at: number;
}

export interface CacheBodyTable {
  digest: string;
  body: string;
  nbytes: number;
}

export interface CacheEntryTable {
  key: string;
  digest: string;
  meta: string;
  fetched_at: number;
  last_used: number;
}

export interface DB {
  batch_job: BatchJobTable;
  batch_target: BatchTargetTable;
  batch_event: BatchEventTable;
  clients: ClientsTable;
  cache_body: CacheBodyTable;
  cache_entry: CacheEntryTable;
  sift_instance: SiftInstanceTable;
}
