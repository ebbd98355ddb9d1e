import { EventEmitter } from 'node:events';
import { Injectable } from '@nestjs/common';

/**
 * In-process news about jobs, sent after the change is committed: the runner learns of new and
 * cancelled jobs, event streams wake up instead of polling.
 */
@Injectable()
export class JobSignals {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  submitted(jobId: string): void {
    this.emitter.emit('submitted', jobId);
  }

  /** A crawl's page added targets to its job. */
  grown(jobId: string): void {
    this.emitter.emit('grown', jobId);
  }

  onGrown(fn: (jobId: string) => void): void {
    this.emitter.on('grown', fn);
  }

  cancelled(jobId: string): void {
    this.emitter.emit('cancelled', jobId);
  }

  /** New events were committed for the job. */
  evented(jobId: string): void {
    this.emitter.emit(`events:${jobId}`);
  }

  /** A webhook delivery of the job is waiting to be sent. */
  deliveryQueued(jobId: string): void {
    this.emitter.emit('delivery', jobId);
  }

  onDeliveryQueued(fn: (jobId: string) => void): void {
    this.emitter.on('delivery', fn);
  }

  onSubmitted(fn: (jobId: string) => void): void {
    this.emitter.on('submitted', fn);
  }

  onCancelled(fn: (jobId: string) => void): void {
    this.emitter.on('cancelled', fn);
  }

  /** Resolves true at the job's next event, or false after ms or when `stop` aborts, whichever comes first. */
  nextEvent(jobId: string, ms: number, stop?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const name = `events:${jobId}`;
      const done = (fired: boolean) => {
        clearTimeout(timer);
        this.emitter.off(name, onEvent);
        stop?.removeEventListener('abort', onStop);
        resolve(fired);
      };
      const onEvent = () => done(true);
      const onStop = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      this.emitter.once(name, onEvent);
      if (stop?.aborted) return done(false);
      stop?.addEventListener('abort', onStop, { once: true });
    });
  }
}
