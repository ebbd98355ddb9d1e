import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DcacheModule } from '../dcache/dcache.module';
import { AddressPolicy } from './address-policy';
import { FetchService } from './fetch.service';
import { Fetcher, systemResolver, type Resolver } from './fetcher';

/** The resolver the fetcher asks; tests replace it to answer what a DNS attacker would. */
export const RESOLVER = Symbol('RESOLVER');

@Module({
  imports: [DcacheModule],
  providers: [
    { provide: RESOLVER, useValue: systemResolver },
    {
      provide: Fetcher,
      useFactory: (config: AppConfig, resolver: Resolver) => {
        const fetcher = new Fetcher({
          policy: new AddressPolicy(config.fleetAllow),
          resolver,
          userAgent: config.userAgent,
        });
        return Object.assign(fetcher, { onApplicationShutdown: () => fetcher.close() });
      },
      inject: [AppConfig, RESOLVER],
    },
    FetchService,
  ],
  exports: [FetchService, Fetcher],
})
export class FetchModule {}
