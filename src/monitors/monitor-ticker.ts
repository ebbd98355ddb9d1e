import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config';
import { isStorageUnavailable } from '../common/errors';
import { MonitorService } from './monitor.service';

const TICK = 'monitors';

/**
 * Drives the monitors: every SIFT_MONITOR_TICK_MS each instance starts the runs that are due
 * (the database decides which instance starts each, see MonitorService). The first tick comes
 * one interval after start: the runs missed while no instance ran start then, once each.
 */
@Injectable()
export class MonitorTicker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('monitors');
  /** A database outage is logged once, not every tick. */
  private down = false;

  constructor(
    private readonly monitors: MonitorService,
    private readonly registry: SchedulerRegistry,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const timer = setInterval(() => void this.tick(), this.config.monitorTickMs);
    timer.unref();
    this.registry.addInterval(TICK, timer);
  }

  beforeApplicationShutdown(): void {
    if (this.registry.doesExist('interval', TICK)) this.registry.deleteInterval(TICK);
  }

  private async tick(): Promise<void> {
    try {
      const started = await this.monitors.tick();
      if (started > 0) this.log.log(`started ${started} monitor runs`);
      this.down = false;
    } catch (err) {
      if (isStorageUnavailable(err)) {
        if (!this.down) this.log.warn(`monitors wait for the database: ${(err as Error).message}`);
        this.down = true;
      } else this.log.error(`monitor tick failed: ${(err as Error).stack ?? String(err)}`);
    }
  }
}
