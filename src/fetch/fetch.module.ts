import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DcacheModule } from '../dcache/dcache.module';
import { AddressPolicy } from './address-policy';
import { ExtractPool } from './extract-pool';
import { FetchService } from './fetch.service';
import { Fetcher, systemResolver, type Resolver } from './fetcher';
import { Robots } from './robots';
import { Clock } from '../common/clock';
import { HostStore } from '../dcache';

/** The resolver the fetcher asks; tests replace it to answer what a DNS attacker would. */
export const RESOLVER = Symbol('RESOLVER');

@Module({
  imports: [DcacheModule],
  providers: [
    { provide: RESOLVER, useValue: systemResolver },
    {
      provide: Fetcher,
      useFactory: (config: AppConfig, resolver: Resolver) =>
        new Fetcher({
          policy: new AddressPolicy(config.fleetAllow),
          resolver,
          userAgent: config.userAgent,
          dns: { timeoutMs: config.dnsTimeoutMs, perCaller: config.dnsPerCaller },
        }),
      inject: [AppConfig, RESOLVER],
    },
    {
      provide: ExtractPool,
      useFactory: (config: AppConfig) =>
        new ExtractPool({ size: config.extractWorkers, maxQueue: config.extractQueue }),
      inject: [AppConfig],
    },
    {
      provide: Robots,
      useFactory: (fetcher: Fetcher, hosts: HostStore, clock: Clock, config: AppConfig) =>
        new Robots(fetcher, hosts, clock, config.robotsAgent),
      inject: [Fetcher, HostStore, Clock, AppConfig],
    },
    FetchService,
  ],
  exports: [FetchService, Fetcher],
})
export class FetchModule {}
