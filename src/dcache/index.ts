export { BatchStore } from './batch-store';
export { BatchReader, Db, Tx, TX_ATTEMPTS, type TxOptions } from './db';
export {
  RECOVERY_LOCK,
  SWEEP_LOCK,
  lockHosts,
  lockDeliveries,
  lockJob,
  lockJobs,
  lockSubmits,
  tryHousekeepingLock,
} from './locks';
export {
  deleteJobs,
  evictBatchOldest,
  failJob,
  markInFlightFailed,
  sweepBatch,
  type FailWrite,
} from './whole-jobs';
export {
  ClassFleet,
  ClassRestricted,
  ROWS_PER_STATEMENT,
  type BatchEvent,
  type BatchJob,
  type BatchStoreMisses,
  type BatchTarget,
} from './rows';
export type { TargetWrite } from './target.repository';
export type { PageHead, TargetFilter } from './target.reader';
export { targetFilterTakes } from './target.reader';
export type { ClaimedDelivery, Delivery, DeliveryWrite, Webhook } from './delivery.repository';
export type { DeliveryClaim } from './delivery-claim';
export { callerKeyOf, type CallerRef } from './job.repository';
export { ContentCache, sha256Hex, type CachedPage, type ContentCacheStats } from './content-cache';
export { ClientStore, type Client } from './client-store';
export { HostStore, type RobotsRow } from './host-store';
export { ProfileStore, type ProfileRow } from './profile-store';
export { HistoryStore, type PageVersion } from './history-store';
export {
  pageDocOf,
  SearchStore,
  storedDocOf,
  type PageDoc,
  type SearchAsk,
  type SearchHit,
} from './search-store';
export { MonitorStore, type MonitorRow, type NewMonitor } from './monitor-store';
export { Dcache, openDcache, type DcacheStats } from './dcache';
export { migrate, openSqlite, type Backend } from './connections';
export { DcacheModule, openDcacheFor } from './dcache.module';
export type { Tables } from './schema';
export { claimTargets, type ClaimRequest, type ClaimedTarget } from './claim';
export type { FoundTarget } from './crawl.repository';
export { COUNTERS, type CountedRow, type Counter } from './counters';
