import type { EgressProxy } from './egress';
import { Clock } from '../common/clock';
import { FetchError, SiftError, type FetchErrorCode } from '../common/errors';
import { HostStore, type RobotsRow } from '../dcache';
import type { CallerClass } from '../config/app-config';
import type { Fetcher } from './fetcher';
import { decidingRule, parseRobots, type AgentRules } from './robots-rules';

/** RFC 9309: at least 500 KiB of a robots.txt is read; what follows is ignored. */
export const ROBOTS_MAX_BYTES = 500 * 1024;
/** A robots.txt (or its absence, 4xx) holds this long. */
export const ROBOTS_TTL_S = 86400;
/** An unreachable or failing robots.txt (5xx: everything disallowed) is asked for again sooner. */
export const ROBOTS_ERROR_TTL_S = 600;
/** The longest Crawl-delay honoured; a site asking more gets this. */
export const MAX_CRAWL_DELAY_S = 60;
/** A site that could not be reached for its robots.txt is tried again after this. */
export const UNREACHABLE_TTL_S = 60;
/** Parsed rules kept in memory, over every origin; the least recently used go first. */
export const ROBOTS_MEMORY_BYTES = 32 * 1024 * 1024;
const ROBOTS_TIMEOUT_MS = 10_000;

interface Rules {
  row: RobotsRow;
  rules?: AgentRules;
  bytes: number;
}

export const robotsDenied = (message: string) =>
  new SiftError(
    403,
    'robots_denied',
    message,
    "the site's robots.txt does not allow this URL; do not fetch it",
  );

/**
 * robots.txt as RFC 9309 says, one fetch per origin: 2xx gives rules (group SIFT_ROBOTS_AGENT,
 * else `*`; the longest match wins, Allow on a tie: robots-rules.ts), 4xx allows everything, 5xx
 * or unreachable disallows everything. Up to 5 redirects and 500 KiB. Kept in the database for
 * every instance (24 h; 10 min for a failure), and parsed once per process into a cache bounded
 * in bytes. It is asked only for a URL whose address the caller may reach (Upstream sees to it),
 * and fetched in a DNS bucket of the asking caller's own; a DNS failure is that caller's, never
 * stored.
 */
export class Robots {
  /** By origin, least recently used first (a Map keeps insertion order). */
  private readonly parsed = new Map<string, Rules>();
  private parsedBytes = 0;
  private readonly flights = new Map<string, Promise<Rules>>();

  constructor(
    private readonly fetcher: Fetcher,
    private readonly hosts: HostStore,
    private readonly clock: Clock,
    private readonly agent: string,
    private readonly memoryBytes = ROBOTS_MEMORY_BYTES,
  ) {}

  /**
   * Throws robots_denied (quoting the rule) unless the agent may fetch `url`; otherwise the
   * Crawl-delay of its group in ms (0 when none).
   */
  async check(url: URL, callerClass: CallerClass, who: string, proxy?: EgressProxy): Promise<number> {
    const { row, rules } = await this.rules(url.origin, callerClass, who, proxy);
    if (row.kind === 'allow') return 0;
    if (row.kind === 'disallow' && row.status === 0) {
      // The site could not be reached for its robots.txt: nothing of it is fetched, and the caller
      // is told why as the page itself would have failed.
      const e = JSON.parse(row.body) as { code: FetchErrorCode; message: string };
      throw new FetchError(e.code, `${url.origin}/robots.txt: ${e.message}`);
    }
    if (row.kind === 'disallow') {
      throw robotsDenied(
        `${url.origin}/robots.txt ${row.status ? `answered ${row.status}` : 'could not be fetched'}: every URL of the site counts as disallowed until it answers`,
      );
    }
    const rule = decidingRule(rules!, url);
    if (rule && !rule.allow) {
      throw robotsDenied(
        `${url.origin}/robots.txt disallows ${url.pathname}${url.search} for ${this.agent}: line ${rule.line} "${rule.text}"`,
      );
    }
    const delay = rules!.crawlDelayS ?? 0;
    return Number.isFinite(delay) && delay > 0 ? Math.min(delay, MAX_CRAWL_DELAY_S) * 1000 : 0;
  }

  /**
   * The Sitemap URLs `origin`'s robots.txt names (as written, unchecked), through the same cache
   * as check(): none when the file is absent, failed or could not be fetched. Throws only what
   * fetching the file for this caller throws (blocked_address, dns_error) or a storage error;
   * never robots_denied. `origin` is a URL's `origin` (`https://a.test`).
   */
  async sitemaps(
    origin: string,
    callerClass: CallerClass,
    who: string,
    proxy?: EgressProxy,
  ): Promise<string[]> {
    const { rules } = await this.rules(origin, callerClass, who, proxy);
    return [...(rules?.sitemaps ?? [])];
  }

  /**
   * Whether the agent may fetch `url` by the rules already at hand (this process's, or a fresh copy
   * in the database), without asking the site: undefined when none is. A crawl drops the links
   * robots.txt disallows by it, and leaves those of sites not asked yet to their fetch's own check
   * (asking every linked site's robots.txt while a page's links are read would hold its slot).
   */
  async allowedIfKnown(url: URL, callerClass: CallerClass): Promise<boolean | undefined> {
    const key = `${callerClass} ${url.origin}`;
    let known: Rules | undefined = this.parsed.get(key);
    if (!known || known.row.expires_at <= this.clock.now()) {
      const row = await this.hosts.robots(key);
      if (!row || row.expires_at <= this.clock.now()) return undefined;
      known = this.parse(key, row);
    }
    if (known.row.kind !== 'rules') return known.row.kind === 'allow';
    const rule = decidingRule(known.rules!, url);
    return !rule || rule.allow;
  }

  /** Parsed rules kept in memory (tests and metrics). */
  memory(): { origins: number; bytes: number } {
    return { origins: this.parsed.size, bytes: this.parsedBytes };
  }

  /**
   * The rules of an origin as the caller's class sees it: kept per (class, origin), so what a
   * fleet fetch of the file met (a redirect into the internal network) is never quoted to a
   * restricted caller, nor a restricted caller's refusal handed to a fleet one.
   */
  private async rules(
    origin: string,
    callerClass: CallerClass,
    who: string,
    proxy?: EgressProxy,
  ): Promise<Rules> {
    // Asked through a proxy, the file is the answer the site gave the proxy's address: kept apart.
    const key = `${callerClass} ${origin}${proxy ? ` via ${proxy.name}` : ''}`;
    const now = this.clock.now();
    const known = this.parsed.get(key);
    if (known && known.row.expires_at > now) {
      this.parsed.delete(key);
      this.parsed.set(key, known);
      return known;
    }
    let flight = this.flights.get(key);
    if (!flight) {
      flight = this.load(key, origin, callerClass, who, proxy).finally(() => this.flights.delete(key));
      this.flights.set(key, flight);
    }
    return flight;
  }

  /** From the database when another instance (or an earlier run) has it fresh, else fetched. */
  private async load(
    key: string,
    origin: string,
    callerClass: CallerClass,
    who: string,
    proxy?: EgressProxy,
  ): Promise<Rules> {
    const now = this.clock.now();
    let row = await this.hosts.robots(key);
    if (!row || row.expires_at <= now) {
      row = { ...(await this.fetchRobots(origin, callerClass, who, now, proxy)), origin: key };
      await this.hosts.putRobots(row);
    }
    return this.parse(key, row);
  }

  /** A robots.txt row, parsed and kept in memory. */
  private parse(key: string, row: RobotsRow): Rules {
    const rules = row.kind === 'rules' ? parseRobots(row.body, this.agent) : undefined;
    // Only the parsed group is kept; the body is the database's.
    const kept: Rules = { row: { ...row, body: row.kind === 'rules' ? '' : row.body }, rules, bytes: 0 };
    kept.bytes = (rules?.bytes ?? 0) + 2 * (key.length + kept.row.body.length) + 128;
    this.remember(key, kept);
    return kept;
  }

  private remember(origin: string, rules: Rules): void {
    const old = this.parsed.get(origin);
    if (old) {
      this.parsed.delete(origin);
      this.parsedBytes -= old.bytes;
    }
    this.parsed.set(origin, rules);
    this.parsedBytes += rules.bytes;
    for (const [o, r] of this.parsed) {
      if (this.parsedBytes <= this.memoryBytes || o === origin) break;
      this.parsed.delete(o);
      this.parsedBytes -= r.bytes;
    }
  }

  private async fetchRobots(
    origin: string,
    callerClass: CallerClass,
    who: string,
    now: number,
    /** Asked through the page's own egress proxy: the site sees one address. */
    proxy?: EgressProxy,
  ): Promise<RobotsRow> {
    const row = (kind: RobotsRow['kind'], status: number, body = '', ttl = ROBOTS_TTL_S): RobotsRow => ({
      origin,
      kind,
      status,
      body,
      fetched_at: now,
      expires_at: now + ttl,
    });
    try {
      const raw = await this.fetcher.fetch(`${origin}/robots.txt`, {
        callerClass,
        // Lookups of the caller's own, beside those of its pages: a caller cannot hold another's.
        caller: `robots:${who}`,
        timeoutMs: ROBOTS_TIMEOUT_MS,
        truncateAt: ROBOTS_MAX_BYTES,
        proxy,
      });
      if (raw.status >= 200 && raw.status < 300) return row('rules', raw.status, raw.body.toString('utf8'));
      if (raw.status >= 400 && raw.status < 500) return row('allow', raw.status);
      return row('disallow', raw.status, '', ROBOTS_ERROR_TTL_S);
    } catch (err) {
      // An address this caller may not reach, a name that does not resolve now, or a proxy
      // that failed is the caller's answer, not the site's: not kept for anyone.
      const callers = ['blocked_address', 'dns_error', 'proxy_error'];
      if (!(err instanceof SiftError) || callers.includes(err.code)) throw err;
      const failure = JSON.stringify({ code: err.code, message: err.message });
      return row('disallow', 0, failure, UNREACHABLE_TTL_S);
    }
  }
}
