import type { Generated } from 'kysely';
import type { DeliveryState, JobStatus, RestartPolicy, TargetStatus } from '../common/job-status';

export interface BatchJobTable {
  id: string;
  caller: string;
  caller_class: string;
  idem_key: string;
  status: JobStatus;
  error: Generated<string>;
  targets_total: number;
  targets_done: Generated<number>;
  /** Unix seconds, to the millisecond (a fraction) since migration 0006, as lease and updated_at. */
  created_at: number;
  lease: number;
  nbytes: Generated<number>;
  on_restart: Generated<RestartPolicy>;
  fingerprint: Generated<string>;
  targets_failed: Generated<number>;
  /** The job's own TTL in seconds; null: the server's default. */
  ttl_s: Generated<number | null>;
  /** The job this one retries the failed targets of. */
  parent_id: Generated<string | null>;
  /** Done targets whose verdict is not ok. Kept by the database (see counters.ts). */
  targets_flagged: Generated<number>;
  /** Targets the job's cancel ended unfinished. Kept by the database (see counters.ts). */
  targets_cancelled: Generated<number>;
  /** Bytes of the job's rows beside its results (targets, events, deliveries): see whole-jobs.ts. */
  row_bytes: Generated<number>;
  /** batch or crawl. */
  kind: Generated<string>;
  /** A crawl's seed and scope (CrawlSpec, JSON); null for a batch. */
  crawl: Generated<string | null>;
  /** A monitor's run: the monitor. */
  monitor_id: Generated<string | null>;
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
  /** In a retry job: the idx of the parent's target this one fetches again. */
  parent_idx: Generated<number | null>;
  /** An earlier target of the job with the same URL and options, whose result this one gets. */
  dup_of: Generated<number | null>;
  /** A done target's verdict (ok, empty, challenge, not_found, error_page). */
  verdict: Generated<string | null>;
  /** Times the target went back to pending for a paused host. */
  deferrals: Generated<number>;
  /** A crawl's target: link hops from the seed. */
  depth: Generated<number | null>;
  /** A crawl's target: the idx of the page it was found on (null: the seed, or a sitemap's). */
  found_on: Generated<number | null>;
  /** A crawl's target: its canonical URL. */
  canonical: Generated<string | null>;
  /** A crawl's done target: the digest of its page's body. */
  digest: Generated<string | null>;
  /** A crawl's done target: the earlier target whose page it is (by redirect or by body). */
  duplicate_of: Generated<number | null>;
}

export interface CrawlSeenTable {
  job_id: string;
  canonical: string;
  /** The target it is, or that reached it. */
  idx: number;
}

export interface RobotsTxtTable {
  origin: string;
  kind: 'rules' | 'allow' | 'disallow';
  status: number;
  body: string;
  fetched_at: number;
  expires_at: number;
}

export interface HostStateTable {
  host: string;
  /** ms: no request to the host before this (a 429/503 with Retry-After). */
  paused_until: Generated<number>;
  /** ms: the next request a Crawl-delay allows. */
  next_at: Generated<number>;
}

export interface BatchWebhookTable {
  job_id: string;
  url: string;
  secret: string;
  /** The event types delivered, as a JSON array. */
  events: string;
}

export interface BatchDeliveryTable {
  job_id: string;
  seq: number;
  type: string;
  /** The request body, fixed when the event is written: every attempt sends the same bytes. */
  payload: string;
  state: DeliveryState;
  attempts: Generated<number>;
  created_at: number;
  next_attempt_at: number;
  last_status: number | null;
  last_error: string | null;
  last_message: string | null;
  /** The instance sending it now. */
  holder: string | null;
  /** The job's caller, `class:name`: whose share of the sender it takes. */
  caller_key: Generated<string>;
  /** When it may be taken: set only while it is its job's first pending delivery and not held. */
  due_at: Generated<number | null>;
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

/** A caller's browser profile: its storage state, sealed (see profiles/profile-seal.ts). */
export interface BrowserProfileTable {
  /** The caller's key (class:name). */
  owner: string;
  name: string;
  /** Sealed storage state; '' until a render saves one. */
  state: string;
  /** Bytes of the storage state before it was sealed. */
  bytes: number;
  /** Unix milliseconds. */
  created_at: number;
  updated_at: number;
}

/** One version of a page in a caller's history (see history-store.ts). */
export interface PageVersionTable {
  /** The caller's key (class:name). */
  owner: string;
  /** The page: a digest of its URL and the options that change it. */
  page: string;
  /** Unix milliseconds: when this version was first seen, and last. */
  at: number;
  seen_at: number;
  /** SHA-256 of its markdown. */
  digest: string;
  /** 1: the URL answered 404 or 410. */
  gone: number;
  /** Its markdown: kept on the latest version only (what the next fetch is compared with). */
  markdown: string;
  /** The fetch that last read it ('job:idx' for a job's target, '' for another), and what it was told (JSON). */
  by_fetch: string;
  changes: string;
}

/** A monitor: pages or a crawl read again on a schedule (see src/monitors). */
export interface MonitorTable {
  id: string;
  caller: string;
  caller_class: string;
  name: string;
  /** What a run submits: `{urls, options}` or `{crawl}` (JSON). */
  request: string;
  /** A cron expression ('' with every_s). */
  schedule: string;
  every_s: number;
  /** `{url, secret}` (JSON), or null. */
  webhook: string | null;
  notify: string;
  paused: number;
  /** Unix milliseconds: the next run's slot. */
  next_at: number;
  runs: number;
  last_run_id: string | null;
  last_run_at: number | null;
  /** Why the last slot's run could not be submitted (a limit), or null. */
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** A page a caller can search again (see search-store.ts); its full-text index is the database's. */
export interface SearchDocTable {
  id: Generated<number>;
  /** The caller's key (class:name). */
  owner: string;
  /** A job's target; null for a page of /v1/fetch. */
  job_id: string | null;
  idx: number | null;
  url: string;
  /** The URL's host. */
  site: string;
  title: string;
  body: string;
  /** Unix milliseconds: when it was written. */
  at: number;
  /** PostgreSQL only: the words as the index keeps them (search-lexemes.ts), null until worked out. */
  tsv?: string | null;
}

export interface Tables {
  batch_job: BatchJobTable;
  batch_target: BatchTargetTable;
  batch_event: BatchEventTable;
  clients: ClientsTable;
  cache_body: CacheBodyTable;
  cache_entry: CacheEntryTable;
  sift_instance: SiftInstanceTable;
  batch_webhook: BatchWebhookTable;
  batch_delivery: BatchDeliveryTable;
  crawl_seen: CrawlSeenTable;
  robots_txt: RobotsTxtTable;
  host_state: HostStateTable;
  browser_profile: BrowserProfileTable;
  page_version: PageVersionTable;
  monitor: MonitorTable;
  search_doc: SearchDocTable;
}
