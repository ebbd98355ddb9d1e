import { canonicalUrl } from './canonical';
import type { LinkRules, SiteLinks } from './site-links';
import type { CrawlSpec } from './spec';
import type { Caller } from '../pages/caller-policy';

/**
 * What a crawl's page adds to its job: its links (and, on the seed, its sitemaps' entries)
 * already within the crawl's scope, robots.txt and depth, each canonical URL once, in page order.
 */
export interface PageFindings {
  /** Link hops from the seed. */
  depth: number;
  /** Where a redirect took the page, as a canonical URL, when that is not its own. */
  landed?: string;
  /** The digest of the page's body. */
  digest?: string;
  links: { url: string; canonical: string; depth: number; foundOn: number | null }[];
}

/** A crawl's target as claimed: its index in the job, its URL and its hops from the seed. */
export interface CrawlTarget {
  idx: number;
  url: string;
  depth?: number | null;
}

/** A crawl's page as fetched: where it ended, its body's digest, and the whole page's links. */
export interface FetchedPage {
  finalUrl: string;
  /** Empty for a page with no content: an empty page says nothing about its body. */
  digest: string;
  links: string[];
}

/**
 * What a crawl's fetched page adds to its job, before the lifecycle writes it: where it landed
 * (when a redirect took it to another URL), its digest, and the URLs it leads to within the
 * crawl's scope, robots.txt and depth. The seed adds its site's sitemap entries too (one hop from
 * it), unless the crawl skips them; with `sitemap: only` those are all a crawl follows.
 */
export async function findingsOf(
  links: SiteLinks,
  job: { caller: Caller; crawl: { spec: CrawlSpec; rules: LinkRules } },
  t: CrawlTarget,
  page: FetchedPage,
  signal: AbortSignal,
): Promise<PageFindings> {
  const { spec, rules } = job.crawl;
  const depth = t.depth ?? 0;
  const own = canonicalUrl(t.url, { ignoreQuery: spec.ignore_query });
  const landed = canonicalUrl(page.finalUrl, { ignoreQuery: spec.ignore_query });
  const found: PageFindings = {
    depth,
    ...(landed && landed !== own ? { landed } : {}),
    ...(page.digest ? { digest: page.digest } : {}),
    links: [],
  };
  if (depth >= spec.max_depth) return found;
  if (spec.sitemap !== 'only') {
    const inScope = await links.inScope(job.caller, page.links, rules, spec.limit);
    found.links.push(...inScope.map((l) => ({ ...l, depth: depth + 1, foundOn: t.idx })));
  }
  if (depth === 0 && spec.sitemap !== 'skip') {
    const seed = new URL(t.url);
    const proxy = (spec.options as { proxy?: string } | undefined)?.proxy;
    const read = await links.sitemapEntries(job.caller, seed, (u) => rules.scope.allows(u), signal, proxy);
    const entries = await links.inScope(
      job.caller,
      read.entries.map((e) => e.url),
      rules,
      spec.limit,
    );
    found.links.push(...entries.map((l) => ({ ...l, depth: 1, foundOn: null })));
  }
  return found;
}
