import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { isTerminalEvent } from '../common/job-status';
import { Stopping, STOPPING_RETRY_AFTER_S } from '../common/stopping';
import { BatchService } from '../batch/batch.service';
import { JobSignals } from '../batch/job-signals';
import { eventView } from '../batch/views';
import type { Caller } from '../pages/caller-policy';
import type { TargetFilter } from '../dcache';

/** An event stream looks for new events at least this often, whatever it was told. */
const STREAM_POLL_MS = 2000;
/** A quiet event stream sends a comment this often, so proxies keep it open. */
const KEEP_ALIVE_MS = 15_000;

/**
 * A stream's connection to its reader. `gone` is aborted when the client hangs up (or had already),
 * and a write waits for the socket to take the chunk or for the hang-up, whichever comes first: a
 * reader that stops reading and then drops the connection never leaves a write waiting for a
 * 'drain' that cannot come, so the stream's loop ends and its admission slot is given back.
 */
class Reader {
  readonly gone = new AbortController();

  constructor(private readonly res: Response) {
    res.once('close', () => this.gone.abort());
    if (res.closed || res.destroyed) this.gone.abort();
  }

  /** Writes and waits for the socket to take it, so a slow reader holds back the producer. */
  write(chunk: string): Promise<void> {
    const { signal } = this.gone;
    if (signal.aborted || this.res.write(chunk)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.res.once('drain', done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** A job's results as NDJSON and its events as SSE, each written as fast as the reader takes it. */
@Injectable()
export class JobStreams {
  constructor(
    private readonly batch: BatchService,
    private readonly signals: JobSignals,
    private readonly stopping: Stopping,
  ) {}

  /**
   * A text file written as it is made (text/plain, UTF-8): the first part is made before the
   * status is sent, so a refusal (a job not found) is still the error envelope.
   */
  async text(parts: AsyncIterable<string>, res: Response): Promise<void> {
    const it = parts[Symbol.asyncIterator]();
    let next = await it.next();
    res.status(200).setHeader('Content-Type', 'text/plain; charset=utf-8');
    const reader = new Reader(res);
    const stop = AbortSignal.any([reader.gone.signal, this.stopping.signal]);
    let whole = false;
    try {
      while (!next.done && !stop.aborted) {
        await reader.write(next.value);
        next = await it.next();
      }
      whole = next.done === true;
    } catch {
      // A read that failed part way (the database gone): the file is cut, said below.
    } finally {
      await it.return?.(undefined).catch(() => undefined);
      // A file cut short (the server stopping, a failed read) ends as a broken answer, never as
      // one a client would take for the whole file.
      if (whole) res.end();
      else res.destroy();
    }
  }

  /**
   * Every result of the job the filter takes, one JSON line each, in target order; with `follow`,
   * each once it has ended, until the job has ended (see resultLines).
   */
  async results(
    caller: Caller,
    id: string,
    filter: TargetFilter,
    follow: boolean,
    res: Response,
  ): Promise<void> {
    await this.batch.open(caller, id);
    res.status(200).setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    if (follow) res.flushHeaders();
    const reader = new Reader(res);
    const stop = AbortSignal.any([reader.gone.signal, this.stopping.signal]);
    for await (const line of this.batch.resultLines(caller, id, filter, { follow, stop })) {
      if (stop.aborted) break;
      await reader.write(line);
    }
    // The server stops: the last line says so, and when to come back for the rest.
    if (this.stopping.signal.aborted && !reader.gone.signal.aborted)
      await reader.write(`${JSON.stringify({ stopping: true, retry_after_s: STOPPING_RETRY_AFTER_S })}\n`);
    res.end();
  }

  /**
   * The SSE stream: stored events after `after`, then live ones, until the terminal event. A job
   * that has ended with nothing after `after` is 204, which tells an EventSource to stop
   * reconnecting (it reconnects after every stream that ends, with the last id it saw).
   */
  async events(caller: Caller, id: string, after: number, res: Response): Promise<void> {
    const ended = await this.batch.open(caller, id);
    if (ended && (await this.batch.eventsAfter(id, after)).length === 0) {
      res.status(204).end();
      return;
    }
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    const reader = new Reader(res);
    const signal = AbortSignal.any([reader.gone.signal, this.stopping.signal]);
    let quietSince = Date.now();
    while (!signal.aborted) {
      const events = await this.batch.eventsAfter(id, after);
      let last = false;
      for (const e of events) {
        if (signal.aborted) break;
        const v = eventView(e);
        await reader.write(`id: ${v.seq}\nevent: ${v.type}\ndata: ${JSON.stringify(v)}\n\n`);
        after = e.seq;
        if (isTerminalEvent(e.type)) last = true;
      }
      // A job that had ended when the stream opened has no event left past those just sent.
      if (last || (ended && events.length === 0)) break;
      if (events.length > 0) {
        quietSince = Date.now();
        continue;
      }
      // Woken by the next event, or after POLL_MS look again anyway: an event another instance
      // wrote is announced by a NOTIFY that could have been missed.
      if ((await this.signals.nextEvent(id, STREAM_POLL_MS, signal)) || signal.aborted) continue;
      if (Date.now() - quietSince >= KEEP_ALIVE_MS) {
        // Quiet for a while: end if the job is gone (swept or evicted), else keep the line open.
        if (!(await this.batch.exists(id))) break;
        await reader.write(': keep-alive\n\n');
        quietSince = Date.now();
      }
    }
    // The server stops: the last event says so; a client reconnects (from its Last-Event-ID) to
    // another instance, or to this one once it is back.
    if (this.stopping.signal.aborted && !reader.gone.signal.aborted) {
      const data = JSON.stringify({ retry_after_s: STOPPING_RETRY_AFTER_S });
      await reader.write(`retry: ${STOPPING_RETRY_AFTER_S * 1000}\nevent: stopping\ndata: ${data}\n\n`);
    }
    res.end();
  }
}
