import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { BatchService } from '../batch/batch.service';
import { SearchService } from '../batch/search.service';
import { MapService } from '../crawl';
import { MonitorService } from '../monitors/monitor.service';
import { PageService } from '../pages/page.service';
import { UploadService } from '../pages/upload.service';
import type { Caller } from '../pages/caller-policy';
import { FairSlots, type Hold } from '../common/fair-slots';
import { hangup } from '../common/hangup';
import { Stopping, STOPPING_RETRY_AFTER_S } from '../common/stopping';
import { callerKeyOf } from '../dcache';
import { AppConfig, isLoopbackHost } from '../config/app-config';
import type { JsonPostTransport } from './json-post';
import type { Served, ServerMaker } from './served';
import type { AdmitFetch } from './service-port';

/** The host name of a Host header or an origin's host, or undefined when it is not one. */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Whether a browser's Origin may call: none (not a browser), a loopback origin, or sift's own
 * host (the request's Host). Any other page's script is refused (the MCP spec's DNS-rebinding rule;
 * the bearer token is the other half).
 */
export function originAllowed(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true;
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return false;
  }
  if (isLoopbackHost(u.hostname)) return true;
  return !!host && u.host.toLowerCase() === host.toLowerCase();
}

/**
 * Whether the Host may be answered: any, unless sift listens on loopback only, when it must be a
 * loopback name (a DNS-rebound name is refused).
 */
export function hostAllowed(host: string | undefined, loopbackOnly: boolean): boolean {
  if (!loopbackOnly) return true;
  if (host === undefined) return false;
  let loopback = loopbackHosts.get(host);
  if (loopback === undefined) {
    const name = hostnameOf(host);
    loopback = name !== undefined && isLoopbackHost(name);
    if (loopbackHosts.size >= 256) loopbackHosts.clear();
    loopbackHosts.set(host, loopback);
  }
  return loopback;
}

/** Host headers seen, and whether each names loopback (a client sends the same one each time). */
const loopbackHosts = new Map<string, boolean>();

const errorBody = (code: string, message: string, hint: string) => ({ error: { code, message, hint } });

/**
 * Servers kept between requests, each still connected to its transport: building one (its tools'
 * schemas) and connecting it cost more than a cached fetch.
 */
const IDLE_SERVERS = 64;
/** POSTs served at once, over every caller (each holds a server and what its tools hold). */
const SERVERS = 64;
/** How long a POST may wait for a server before it is told to come back. */
const SERVER_WAIT_MS = 10_000;

/**
 * MCP over Streamable HTTP, stateless: each POST /mcp is served by a server of its own while it
 * runs, bound to the caller its entrance authenticated (app.setup.ts), and answered in JSON. A
 * server is lent again once its POST is answered; one whose caller hung up first is closed. GET
 * and DELETE (a session's stream and end) are 405: there are no sessions.
 */
@Injectable()
export class McpHttp {
  private readonly log = new Logger('mcp');
  private readonly idle: Served[] = [];
  /** The POSTs being served, handed out by the one fair scheduler. */
  private readonly servers = new FairSlots(SERVERS);
  /** The transports answering a POST now: told to end it when the server stops. */
  private readonly busy = new Set<JsonPostTransport>();
  /**
   * The MCP SDK and the tools, loaded on the first POST: about 7 MB of heap (its schemas, zod,
   * ajv) that a server no MCP client calls never holds.
   */
  private loaded?: Promise<{ maker: ServerMaker; servicePort: typeof import('./served').servicePort }>;
  /** Whether sift listens on loopback only (then a Host must be a loopback name). */
  private readonly loopbackOnly: boolean;

  constructor(
    private readonly pages: PageService,
    private readonly uploads: UploadService,
    private readonly batch: BatchService,
    private readonly maps: MapService,
    private readonly monitors: MonitorService,
    private readonly searches: SearchService,
    private readonly config: AppConfig,
    private readonly stopping: Stopping,
  ) {
    this.loopbackOnly = isLoopbackHost(config.host);
    stopping.signal.addEventListener('abort', () => {
      for (const t of this.busy) t.stop(STOPPING_RETRY_AFTER_S);
    });
  }

  /**
   * The route's handler. `admit` takes a place among the caller's fetches in flight (the cap the
   * REST API's fetch and map hold) or throws 429; it returns the place's release.
   */
  handler(admit?: AdmitFetch): (req: Request, res: Response) => void {
    return (req, res) => this.serve(req, res, admit);
  }

  private serve(req: Request, res: Response, admit: AdmitFetch | undefined): void {
    void this.handle(req, res, admit).catch(() => {
      if (!res.headersSent) {
        res.status(500).json(errorBody('internal', 'the MCP request failed', 'try again later'));
      } else res.end();
    });
  }

  private async handle(req: Request, res: Response, admit: AdmitFetch | undefined): Promise<void> {
    if (req.method !== 'POST') {
      res
        .status(405)
        .setHeader('Allow', 'POST')
        .json(
          errorBody(
            'method_not_allowed',
            `${req.method} /mcp is not served`,
            'sift MCP is stateless: send POST /mcp',
          ),
        );
      return;
    }
    if (!hostAllowed(req.headers.host, this.loopbackOnly)) {
      res
        .status(403)
        .json(
          errorBody(
            'forbidden',
            'this Host may not call /mcp',
            'sift listens on loopback: call it by a loopback name',
          ),
        );
      return;
    }
    if (!originAllowed(req.headers.origin, req.headers.host)) {
      res
        .status(403)
        .json(
          errorBody(
            'forbidden',
            'this Origin may not call /mcp',
            "call from a loopback origin, sift's own, or without an Origin",
          ),
        );
      return;
    }
    const caller = (req as Request & { caller?: Caller }).caller;
    if (!caller) throw new Error('no caller on an /mcp request');
    if (this.stopping.signal.aborted) {
      res
        .status(503)
        .setHeader('Retry-After', String(STOPPING_RETRY_AFTER_S))
        .json(
          errorBody('server_busy', 'sift is stopping', `send the call again in ${STOPPING_RETRY_AFTER_S} s`),
        );
      return;
    }
    const { maker, servicePort } = await this.load();
    // The signal that stops a fetch when the caller hangs up is made only when a wait begins.
    const gone = hangup(res);
    const hold =
      this.servers.tryAcquire(callerKeyOf(caller)) ?? (await this.waitForServer(caller, res, gone));
    if (!hold) return;
    // A server serves one POST at a time, and another only once every call it started has
    // ended: an answer can reach no POST but its own.
    const served = this.idle.pop() ?? (await maker.build());
    served.port = servicePort(
      {
        pages: this.pages,
        uploads: this.uploads,
        batch: this.batch,
        maps: this.maps,
        monitors: this.monitors,
        search: this.searches,
        admit,
      },
      caller,
      gone.signal,
    );
    let answered = false;
    res.once('close', () => {
      if (answered) return;
      this.busy.delete(served.transport);
      // The caller left first: what the server still runs for it is aborted, and the server is
      // closed, never lent again (a late answer must not reach the next caller).
      void served.server.close();
      hold.release();
    });
    this.busy.add(served.transport);
    served.transport.handle(req, res, () => {
      this.busy.delete(served.transport);
      answered = true;
      gone.done();
      served.port = undefined;
      if (served.transport.idle && this.idle.length < IDLE_SERVERS) this.idle.push(served);
      else void served.server.close();
      hold.release();
    });
  }

  /**
   * A server for a POST that found none free: in the caller's turn, within SERVER_WAIT_MS. None
   * is undefined: the caller hung up, or it waited too long and was told 503 to come back.
   */
  private async waitForServer(
    caller: Caller,
    res: Response,
    gone: { signal: () => AbortSignal },
  ): Promise<Hold | undefined> {
    const signal = AbortSignal.any([gone.signal(), AbortSignal.timeout(SERVER_WAIT_MS)]);
    try {
      return await this.servers.acquire(callerKeyOf(caller), { signal });
    } catch {
      if (!gone.signal().aborted && !res.headersSent) {
        res
          .status(503)
          .setHeader('Retry-After', '5')
          .json(
            errorBody(
              'server_busy',
              `every MCP server was busy for ${SERVER_WAIT_MS} ms`,
              'try again in a few seconds',
            ),
          );
      }
      return undefined;
    }
  }

  private load() {
    this.loaded ??= import('./served').then((m) => ({
      maker: new m.ServerMaker((err) =>
        this.log.error(`an MCP tool failed: ${(err as Error)?.stack ?? String(err)}`),
      ),
      servicePort: m.servicePort,
    }));
    return this.loaded;
  }
}
