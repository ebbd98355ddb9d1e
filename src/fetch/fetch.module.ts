import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { DcacheModule } from '../dcache/dcache.module';
import { HostStore } from '../dcache';
import { AddressPolicy } from './address-policy';
import { Fetcher, systemResolver, type Resolver } from './fetcher';
import { Robots } from './robots';
import { Upstream } from './upstream';

/** The resolver the fetcher asks; tests replace it to answer what a DNS attacker would. */
export const RESOLVER = Symbol('RESOLVER');

/** The transport: the guarded fetcher, robots.txt, and Upstream (a request as a good citizen). */
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
          documentCap: config.pdfMaxBytes,
          dns: { timeoutMs: config.dnsTimeoutMs, perCaller: config.dnsPerCaller },
        }),
      inject: [AppConfig, RESOLVER],
    },
    {
      provide: Robots,
      useFactory: (fetcher: Fetcher, hosts: HostStore, clock: Clock, config: AppConfig) =>
        new Robots(fetcher, hosts, clock, config.robotsAgent),
      inject: [Fetcher, HostStore, Clock, AppConfig],
    },
    {
      provide: Upstream,
      useFactory: (fetcher: Fetcher, robots: Robots, hosts: HostStore, clock: Clock, config: AppConfig) =>
        new Upstream({ fetcher, robots, hosts, clock, perHostConcurrency: config.perHostConcurrency }),
      inject: [Fetcher, Robots, HostStore, Clock, AppConfig],
    },
  ],
  exports: [Fetcher, Upstream, Robots, RESOLVER],
})
export class FetchModule {}
