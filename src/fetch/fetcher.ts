import * as dns from 'node:dns';
import type { CallerClass } from '../config/app-config';
import { FetchError } from '../common/errors';
import { forCaller, type AddressPolicy } from './address-policy';
import { AddressCheck } from './address-check';
import type { DnsGuard, DnsGuardOptions, Resolver } from './dns-guard';
import { toFetchError } from './upstream-errors';
import { header, parseRetryAfter, readBody } from './answer';
import { Agent, request } from '../tuning/undici';
import { normalHostname } from '../common/urls';
import { egressConnector, type EgressProxy } from './egress';

export type { Resolver } from './dns-guard';

export const MAX_REDIRECTS = 5;
export const DOWNLOAD_CAP = 10 * 1024 * 1024;

export const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

export interface FetchOptions {
  callerClass: CallerClass;
  /** Who asked: the per-caller DNS cap counts against this name (the class when not given). */
  caller?: string;
  timeoutMs: number;
  headers?: Record<string, string>;
  /** The Cookie header for a hop's URL, when the caller's cookies go there (pages/cookies.ts). */
  cookies?: (url: URL) => string | undefined;
  signal?: AbortSignal;
  /** Read at most this many decoded bytes and keep them, instead of failing over the cap. */
  truncateAt?: number;
  /**
   * Called before every hop (the first is 0, then each redirect), once the hop's address is known
   * to be one the caller may reach, with the fetch's own signal; what it throws ends the fetch.
   */
  beforeHop?: (url: URL, hop: number, signal: AbortSignal) => Promise<void>;
  /** The operator's egress proxy to go through (its failure is proxy_error, never a direct connection). */
  proxy?: EgressProxy;
}

export interface RawPage {
  url: string;
  finalUrl: string;
  status: number;
  contentType: string;
  /** The decoded body bytes (after content-encoding), at most the download cap. */
  body: Buffer;
  /** Seconds the server asked to wait (Retry-After), when it said. */
  retryAfterS?: number;
  /** Validators for a later conditional request. */
  etag?: string;
  lastModified?: string;
}

export interface FetcherOptions {
  policy: AddressPolicy;
  resolver?: Resolver;
  userAgent?: string;
  downloadCap?: number;
  /** The download cap for a PDF (SIFT_PDF_MAX_BYTES); the page cap when not given. */
  documentCap?: number;
  connectTimeoutMs?: number;
  dns?: Partial<DnsGuardOptions>;
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);

/**
 * The HTTP fetcher. Every hop's host goes through the address check (see AddressCheck) before it
 * is connected to, and the connection's own lookup is the check's, so it connects to the checked
 * address (pinned: no second lookup that DNS rebinding could answer differently). Redirects are
 * followed by hand so every hop is checked again.
 */
export class Fetcher {
  /** The agents by class, and by class and egress proxy: each made on first use. */
  private readonly agents = new Map<string, Agent>();
  private readonly downloadCap: number;
  private readonly documentCap: number;
  private readonly userAgent: string;
  /** The one address check, shared with the render proxy and anything else that connects. */
  readonly addressCheck: AddressCheck;

  constructor(private readonly opts: FetcherOptions) {
    this.downloadCap = opts.downloadCap ?? DOWNLOAD_CAP;
    this.documentCap = opts.documentCap ?? this.downloadCap;
    this.userAgent = opts.userAgent ?? 'sift/0.1';
    this.addressCheck = new AddressCheck({
      policy: opts.policy,
      resolver: opts.resolver ?? systemResolver,
      dns: {
        timeoutMs: opts.dns?.timeoutMs ?? 5000,
        perCaller: opts.dns?.perCaller ?? 4,
        reuseMs: opts.dns?.reuseMs,
      },
    });
  }

  /** The DNS guard of the address check (its per-caller counts, for tests and metrics). */
  get dns(): DnsGuard {
    return this.addressCheck.dns;
  }

  /** The class's agent, or its agent through `proxy` (see egressConnector). */
  private agent(callerClass: CallerClass, proxy?: EgressProxy): Agent {
    const key = `${callerClass} ${proxy?.name ?? ''}`;
    let a = this.agents.get(key);
    if (!a) {
      const lookup = this.addressCheck.lookupFor(callerClass);
      const timeout = this.opts.connectTimeoutMs ?? 10_000;
      a = new Agent({
        connect: (proxy ? egressConnector(proxy, lookup) : { lookup, timeout }) as never,
        headersTimeout: 0,
        bodyTimeout: 0,
        connections: 64,
      });
      this.agents.set(key, a);
    }
    return a;
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /**
   * Ends every connection, fetches still in flight included: by the app's shutdown the runner has
   * given its targets their grace, and a fetch left (an MCP call's, say) would hold the process.
   */
  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.destroy()));
  }

  async fetch(url: string, o: FetchOptions): Promise<RawPage> {
    // One controller for the deadline and the caller's cancel, its timer cleared when the fetch
    // ends: AbortSignal.timeout would keep a timer and a signal alive for the whole timeout.
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort(new DOMException('the fetch timed out', 'TimeoutError'));
    }, o.timeoutMs);
    const onCancel = () => ac.abort(o.signal!.reason);
    if (o.signal?.aborted) onCancel();
    else o.signal?.addEventListener('abort', onCancel, { once: true });
    const signal = ac.signal;
    let current = parseHttpUrl(url);
    const origin = current.origin;
    let headers = o.headers ?? {};
    try {
      for (let hop = 0; ; hop++) {
        // The caller's headers (and a revalidation's validators) were meant for the origin asked
        // for: a redirect to another origin gets none of them.
        if (current.origin !== origin) headers = {};
        await this.checkHost(current, o.callerClass, o.caller ?? o.callerClass, signal);
        // beforeHop may wait (robots.txt, a host slot, a Crawl-delay turn) past the answer's reuse:
        // then the connection's lookup is made again in the caller's bucket, and checked.
        if (o.beforeHop) await o.beforeHop(current, hop, signal);
        if (o.beforeHop) await this.checkHost(current, o.callerClass, o.caller ?? o.callerClass, signal);
        const cookie = [headers.cookie, o.cookies?.(current)].filter(Boolean).join('; ');
        const res = await request(current, {
          method: 'GET',
          dispatcher: this.agent(o.callerClass, o.proxy),
          signal,
          headers: {
            'user-agent': this.userAgent,
            accept:
              'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,application/pdf;q=0.8,*/*;q=0.5',
            'accept-encoding': 'gzip, deflate, br',
            ...headers,
            ...(cookie ? { cookie } : {}),
          },
        });
        // Errors while reading surface through the reader; a late one after we let go must not go unhandled.
        res.body.on('error', () => undefined);
        const location = header(res.headers, 'location');
        if (REDIRECT.has(res.statusCode) && location) {
          await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
          if (hop >= MAX_REDIRECTS) {
            throw new FetchError(
              'too_many_redirects',
              `more than ${MAX_REDIRECTS} redirects, last to ${location}`,
            );
          }
          current = parseHttpUrl(location, current);
          continue;
        }
        const caps = { page: this.downloadCap, document: this.documentCap };
        const body = await readBody(res, { signal, caps, truncateAt: o.truncateAt });
        return {
          url,
          finalUrl: current.href,
          status: res.statusCode,
          contentType: header(res.headers, 'content-type') ?? '',
          body,
          retryAfterS: parseRetryAfter(header(res.headers, 'retry-after')),
          etag: header(res.headers, 'etag'),
          lastModified: header(res.headers, 'last-modified'),
        };
      }
    } catch (err) {
      throw forCaller(toFetchError(err, current, timedOut, o.signal), current, o.callerClass);
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onCancel);
    }
  }

  /**
   * One POST of `body`, under the caller's address policy like a fetch, with no redirect followed
   * (a 3xx is the answer) and at most `maxBody` bytes of the answer read: what a webhook
   * delivery needs.
   */
  async post(
    url: string,
    o: FetchOptions & { body: string; maxBody: number },
  ): Promise<{ status: number; body: string }> {
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort(new DOMException('the request timed out', 'TimeoutError'));
    }, o.timeoutMs);
    const onCancel = () => ac.abort(o.signal!.reason);
    if (o.signal?.aborted) onCancel();
    else o.signal?.addEventListener('abort', onCancel, { once: true });
    const target = parseHttpUrl(url);
    try {
      await this.checkHost(target, o.callerClass, o.caller ?? o.callerClass, ac.signal);
      const res = await request(target, {
        method: 'POST',
        dispatcher: this.agent(o.callerClass),
        signal: ac.signal,
        headers: { 'user-agent': this.userAgent, 'content-type': 'application/json', ...o.headers },
        body: o.body,
      });
      res.body.on('error', () => undefined);
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of res.body) {
          chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
          if (size >= o.maxBody) break;
        }
      } finally {
        res.body.destroy();
      }
      return { status: res.statusCode, body: Buffer.concat(chunks).subarray(0, o.maxBody).toString('utf8') };
    } catch (err) {
      throw forCaller(toFetchError(err, target, timedOut, o.signal), target, o.callerClass);
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onCancel);
    }
  }

  /**
   * Checks the hop's host before any connection: an IP literal as it stands (undici never looks one
   * up), a name by the lookup its connection will then use (see AddressCheck).
   */
  private async checkHost(
    u: URL,
    callerClass: CallerClass,
    caller: string,
    signal: AbortSignal,
  ): Promise<void> {
    await this.addressCheck.addresses(u.hostname, callerClass, caller, signal);
  }
}

export function parseHttpUrl(raw: string, base?: URL): URL {
  let u: URL;
  try {
    u = new URL(raw, base);
  } catch {
    throw new FetchError('invalid_request', `not a valid URL: ${raw.slice(0, 200)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new FetchError(
      base ? 'blocked_address' : 'invalid_request',
      `only http and https URLs are fetched, not ${u.protocol}`,
    );
  }
  if (u.username || u.password) u.username = u.password = '';
  u.hash = '';
  // Every per-host key (pauses, slots, robots.txt's origin) comes from this URL.
  const hostname = normalHostname(u.hostname);
  if (hostname !== u.hostname && hostname) u.hostname = hostname;
  return u;
}
