export {
  BatchStore,
  ClassFleet,
  ClassRestricted,
  LIVE_STATUSES,
  type BatchEvent,
  type BatchJob,
  type BatchStoreMisses,
  type BatchTarget,
} from './batch-store';
export { ContentCache, sha256Hex, type CachedPage, type ContentCacheStats } from './content-cache';
export { ClientStore, type Client } from './client-store';
export { Dcache, openDcache, type DcacheStats } from './dcache';
export { migrate, openDatabase } from './database';
export { DcacheModule } from './dcache.module';
export type { DB } from './schema';
