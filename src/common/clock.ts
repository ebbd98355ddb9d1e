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
}
