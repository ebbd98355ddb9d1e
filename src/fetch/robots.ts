import robotsParser from 'robots-parser';
import { Clock } from '../common/clock';
import { FetchError, SiftError, type FetchErrorCode } from '../common/errors';
import { HostStore, type RobotsRow } from '../dcache';
import type { CallerClass } from '../config/app-config';
import type { Fetcher } from './fetcher';

type Parser = ReturnType<typeof robotsParser>;

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
const ROBOTS_TIMEOUT_MS = 10_000;

interface Rules {
  row: RobotsRow;
  parser?: Parser;
  lines?: string[];
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
 * else `*`; the longest match wins, Allow on a tie: robots-parser), 4xx allows everything, 5xx or
 * unreachable disallows everything. Up to 5 redirects and 500 KiB. Kept in the database for
 * every instance (24 h; 10 min for a failure), and parsed once per process.
 */
export class Robots {
  private readonly parsed = new Map<string, Rules>();
  private readonly flights = new Map<string, Promise<Rules>>();

  constructor(
    private readonly fetcher: Fetcher,
    private readonly hosts: HostStore,
    private readonly clock: Clock,
    private readonly agent: string,
  ) {}

  /**
   * Throws robots_denied (quoting the rule) unless the agent may fetch `url`; otherwise the
   * Crawl-delay of its group in ms (0 when none).
   */
  async check(url: URL, callerClass: CallerClass, caller: string): Promise<number> {
    const { row, parser, lines } = await this.rules(url.origin, callerClass, caller);
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
    if (parser!.isAllowed(url.href, this.agent) === false) {
      const n = parser!.getMatchingLineNumber(url.href, this.agent);
      const rule = n > 0 ? lines![n - 1].trim() : 'Disallow';
      throw robotsDenied(
        `${url.origin}/robots.txt disallows ${url.pathname}${url.search} for ${this.agent}: line ${n} "${rule.slice(0, 200)}"`,
      );
    }
    const delay = Number(parser!.getCrawlDelay(this.agent) ?? 0);
    return Number.isFinite(delay) && delay > 0 ? Math.min(delay, MAX_CRAWL_DELAY_S) * 1000 : 0;
  }

  private async rules(origin: string, callerClass: CallerClass, caller: string): Promise<Rules> {
    const now = this.clock.now();
    const known = this.parsed.get(origin);
    if (known && known.row.expires_at > now) return known;
    let flight = this.flights.get(origin);
    if (!flight) {
      flight = this.load(origin, callerClass, caller).finally(() => this.flights.delete(origin));
      this.flights.set(origin, flight);
    }
    return flight;
  }

  /** From the database when another instance (or an earlier run) has it fresh, else fetched. */
  private async load(origin: string, callerClass: CallerClass, caller: string): Promise<Rules> {
    const now = this.clock.now();
    let row = await this.hosts.robots(origin);
    if (!row || row.expires_at <= now) {
      row = await this.fetchRobots(origin, callerClass, caller, now);
      await this.hosts.putRobots(row);
    }
    const rules: Rules =
      row.kind === 'rules'
        ? { row, parser: robotsParser(`${origin}/robots.txt`, row.body), lines: row.body.split(/\r\n|\r|\n/) }
        : { row };
    if (this.parsed.size >= 10_000) this.parsed.clear();
    this.parsed.set(origin, rules);
    return rules;
  }

  private async fetchRobots(
    origin: string,
    callerClass: CallerClass,
    caller: string,
    now: number,
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
        caller,
        timeoutMs: ROBOTS_TIMEOUT_MS,
        truncateAt: ROBOTS_MAX_BYTES,
      });
      if (raw.status >= 200 && raw.status < 300) return row('rules', raw.status, raw.body.toString('utf8'));
      if (raw.status >= 400 && raw.status < 500) return row('allow', raw.status);
      return row('disallow', raw.status, '', ROBOTS_ERROR_TTL_S);
    } catch (err) {
      // An address this caller may not reach is the caller's answer, not the site's: not kept.
      if (!(err instanceof SiftError) || err.code === 'blocked_address') throw err;
      const failure = JSON.stringify({ code: err.code, message: err.message });
      return row('disallow', 0, failure, UNREACHABLE_TTL_S);
    }
  }
}
