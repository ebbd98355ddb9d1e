import { Injectable } from '@nestjs/common';

/** The one source of time for services; tests replace it to set the clock. */
@Injectable()
export class Clock {
  /** Unix seconds. */
  now(): number {
    return Math.floor(Date.now() / 1000);
  }

  nowMs(): number {
    return Date.now();
  }

  /**
   * Unix seconds to the millisecond, as a fraction (1700000000.123): the time jobs, their targets,
   * events and webhook deliveries keep, so the API shows when things happened to the millisecond.
   * The unit is still the second, so leases and TTLs add up as with now().
   */
  preciseNow(): number {
    return this.nowMs() / 1000;
  }
}
