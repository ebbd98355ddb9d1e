import { Injectable } from '@nestjs/common';
import { TimeSlicer } from '../common/time-slice';
import { AppConfig } from '../config/app-config';
import { Fetcher } from '../fetch/fetcher';
import { Robots } from '../fetch/robots';
import type { Caller } from '../pages/caller-policy';
import { canonicalUrl } from './canonical';
import { LLMS_TXT_MAX_BYTES, isLlmsTxt, llmsTxtLinks, type LlmsTxtLink } from './llms-txt';
import { CrawlScope } from './scope';
import { readSitemaps, type SitemapResult } from './sitemaps';
import type { CrawlSpec } from './spec';

/** How long one sitemap file may take. */
const SITEMAP_TIMEOUT_MS = 20_000;
/** How long a site's sitemaps may take in all: what was read by then is the answer. */
export const SITEMAPS_DEADLINE_MS = 60_000;

/** A URL in a crawl's scope, with its canonical form. */
export interface ScopedLink {
  url: string;
  canonical: string;
}

/** What a crawl or a map is held to: its scope, and whether robots.txt is asked. */
export interface LinkRules {
  scope: CrawlScope;
  ignoreQuery: boolean;
  robots: boolean;
}

export function linkRulesOf(
  spec: Pick<
    CrawlSpec,
    | 'seed'
    | 'path_prefix'
    | 'include_paths'
    | 'exclude_paths'
    | 'include_regex'
    | 'exclude_regex'
    | 'allow_subdomains'
    | 'allow_external'
    | 'ignore_query'
    | 'options'
  >,
): LinkRules {
  return {
    scope: new CrawlScope({
      seed: spec.seed,
      pathPrefix: spec.path_prefix,
      includePaths: spec.include_paths,
      excludePaths: spec.exclude_paths,
      includeRegex: spec.include_regex,
      excludeRegex: spec.exclude_regex,
      allowSubdomains: spec.allow_subdomains,
      allowExternal: spec.allow_external,
    }),
    ignoreQuery: spec.ignore_query,
    robots: (spec.options as { robots?: boolean } | undefined)?.robots !== false,
  };
}

/**
 * The URLs a crawl or a map may follow: links and sitemap entries, each made canonical, held to
 * the scope, and (unless the caller turned robots.txt off) to what the site's robots.txt allows,
 * so a disallowed page is never added, let alone requested.
 */
@Injectable()
export class SiteLinks {
  constructor(
    private readonly fetcher: Fetcher,
    private readonly robots: Robots,
    private readonly config: AppConfig,
  ) {}

  /**
   * The links in scope, each canonical URL once, in the order given, at most `max`. Up to a
   * sitemap's 50,000 URLs of 2,048 characters: the event loop gets a turn between slices.
   */
  async inScope(caller: Caller, urls: string[], rules: LinkRules, max: number): Promise<ScopedLink[]> {
    const out: ScopedLink[] = [];
    const seen = new Set<string>();
    const slicer = new TimeSlicer();
    for (const raw of urls) {
      if (out.length >= max) break;
      if (slicer.due()) await slicer.turn();
      const canonical = canonicalUrl(raw, { ignoreQuery: rules.ignoreQuery });
      if (!canonical || seen.has(canonical)) continue;
      seen.add(canonical);
      const u = new URL(canonical);
      if (!rules.scope.allows(u)) continue;
      // Disallowed by a robots.txt already read: dropped. A site not asked yet is asked by the
      // page's own fetch, which never requests a disallowed page either.
      if (rules.robots && (await this.robots.allowedIfKnown(u, caller.callerClass)) === false) continue;
      // Fetched as written, less its fragment and tracking parameters.
      out.push({ url: canonicalUrl(raw, { keepPath: true }) ?? raw, canonical });
    }
    return out;
  }

  /**
   * The links of the site's /llms.txt, read through the caller's address policy (and the crawl's
   * proxy) within LLMS_TXT_MAX_BYTES and SITEMAP_TIMEOUT_MS. A site without one, or whose answer
   * is not a text file or could not be read, has none: the crawl or map goes on without them.
   */
  async llmsTxt(caller: Caller, seed: URL, signal?: AbortSignal, proxyName?: string): Promise<LlmsTxtLink[]> {
    const proxy = proxyName !== undefined ? this.config.proxies.get(proxyName) : undefined;
    const url = `${seed.origin}/llms.txt`;
    try {
      const raw = await this.fetcher.fetch(url, {
        callerClass: caller.callerClass,
        caller: caller.name,
        timeoutMs: SITEMAP_TIMEOUT_MS,
        truncateAt: LLMS_TXT_MAX_BYTES,
        signal,
        proxy,
      });
      if (!isLlmsTxt(raw.status, raw.contentType)) return [];
      return llmsTxtLinks(raw.body.toString('utf8'), raw.finalUrl);
    } catch (err) {
      // The caller hung up or the crawl was cancelled: that ends the work, not only this file.
      if (signal?.aborted) throw err;
      return [];
    }
  }

  /**
   * The page URLs of the site's sitemaps (robots.txt's Sitemap lines and /sitemap.xml), in scope
   * by `keep`, read within SITEMAP_LIMITS and SITEMAPS_DEADLINE_MS through the caller's address
   * policy.
   */
  async sitemapEntries(
    caller: Caller,
    seed: URL,
    keep: (u: URL) => boolean,
    signal?: AbortSignal,
    /** The crawl's egress proxy (its pages' `proxy`): the sitemaps are read through it too. */
    proxyName?: string,
  ): Promise<SitemapResult> {
    const proxy = proxyName !== undefined ? this.config.proxies.get(proxyName) : undefined;
    const deadline = AbortSignal.timeout(SITEMAPS_DEADLINE_MS);
    signal = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let listed: string[] = [];
    try {
      listed = await this.robots.sitemaps(seed.origin, caller.callerClass, caller.name, proxy);
    } catch {
      // The site's robots.txt could not be read: /sitemap.xml is still looked at.
    }
    return readSitemaps(
      [...listed, `${seed.origin}/sitemap.xml`],
      async (url, maxBytes) => {
        const raw = await this.fetcher.fetch(url, {
          callerClass: caller.callerClass,
          caller: caller.name,
          timeoutMs: SITEMAP_TIMEOUT_MS,
          truncateAt: maxBytes,
          signal,
          proxy,
        });
        return { status: raw.status, body: raw.body, contentType: raw.contentType };
      },
      { keep, signal },
    );
  }
}
