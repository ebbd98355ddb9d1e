import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';

/** What a stream's last message tells its client: come back after this many seconds. */
export const STOPPING_RETRY_AFTER_S = 5;

/**
 * The server is stopping (SIGTERM, or the app closing): every open stream (an event stream, an
 * NDJSON follow, an MCP POST still being answered) sends its last message and ends when `signal`
 * aborts, so no client holds the process open. main.ts says so first, before the runner's grace;
 * the app's own shutdown hook says so too, for an app closed without a signal.
 */
@Injectable()
export class Stopping implements BeforeApplicationShutdown {
  private readonly ac = new AbortController();

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  stop(): void {
    this.ac.abort();
  }

  beforeApplicationShutdown(): void {
    this.stop();
  }
}
