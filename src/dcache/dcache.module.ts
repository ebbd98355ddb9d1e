import { Logger, Module } from '@nestjs/common';
import { AppConfig, databaseOf } from '../config/app-config';
import { BatchStore } from './batch-store';
import { ClientStore } from './client-store';
import { HostStore } from './host-store';
import { ProfileStore } from './profile-store';
import { HistoryStore } from './history-store';
import { MonitorStore } from './monitor-store';
import { SearchStore } from './search-store';
import { ContentCache } from './content-cache';
import { Dcache, openDcache } from './dcache';
import { BatchReader, Db } from './db';

/** The database the configuration names, waited for (PostgreSQL) and migrated. */
export function openDcacheFor(
  config: AppConfig,
  warn: (message: string) => void = (m) => new Logger('database').warn(m),
): Promise<Dcache> {
  return openDcache({
    ...databaseOf(config),
    maxBytes: config.cacheMaxBytes,
    timeoutMs: config.dbTimeoutMs,
    waitS: config.dbWaitS,
    log: warn,
  });
}

/** Owns the one SQLite connection: opened and migrated at start, closed as the app's last step. */
@Module({
  providers: [
    {
      provide: Dcache,
      useFactory: (config: AppConfig) => openDcacheFor(config),
      inject: [AppConfig],
    },
    { provide: Db, useFactory: (d: Dcache) => d.db, inject: [Dcache] },
    { provide: BatchReader, useFactory: (d: Dcache) => d.reader, inject: [Dcache] },
    { provide: BatchStore, useFactory: (d: Dcache) => d.batch, inject: [Dcache] },
    { provide: ContentCache, useFactory: (d: Dcache) => d.cache, inject: [Dcache] },
    { provide: ClientStore, useFactory: (d: Dcache) => d.clients, inject: [Dcache] },
    { provide: HostStore, useFactory: (d: Dcache) => d.hosts, inject: [Dcache] },
    { provide: ProfileStore, useFactory: (d: Dcache) => d.profiles, inject: [Dcache] },
    { provide: HistoryStore, useFactory: (d: Dcache) => d.history, inject: [Dcache] },
    { provide: MonitorStore, useFactory: (d: Dcache) => d.monitors, inject: [Dcache] },
    { provide: SearchStore, useFactory: (d: Dcache) => d.search, inject: [Dcache] },
  ],
  exports: [
    Dcache,
    Db,
    BatchReader,
    BatchStore,
    ContentCache,
    ClientStore,
    HostStore,
    ProfileStore,
    HistoryStore,
    MonitorStore,
    SearchStore,
  ],
})
export class DcacheModule {}
