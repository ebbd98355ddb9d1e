export { BatchStore, RECOVERY_LOCK, SWEEP_LOCK } from './batch-store';
export {
  ClassFleet,
  ClassRestricted,
  type BatchEvent,
  type BatchJob,
  type BatchStoreMisses,
  type BatchTarget,
} from './batch-rows';
export type { TargetWrite } from './target-rows';
export type { ClaimedDelivery, Delivery, DeliveryWrite, Webhook } from './delivery-rows';
export { ContentCache, sha256Hex, type CachedPage, type ContentCacheStats } from './content-cache';
export { ClientStore, type Client } from './client-store';
export { HostStore, type RobotsRow } from './host-store';
export { Dcache, openDcache, type DcacheStats } from './dcache';
export { migrate, openDatabase, openPostgres, type Backend } from './database';
export { DcacheModule, openDcacheFor } from './dcache.module';
export type { DB } from './schema';
