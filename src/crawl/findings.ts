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
 * crawl's scope, robots.txt and depth. The seed adds its site's llms.txt links and sitemap
 * entries too (one hop from it), unless the crawl skips them; with `llms_txt: only` or
 * `sitemap: only` those are all a crawl follows.
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
  // Jobs stored before llms.txt was read skip it, as a crawl does unless asked.
  const llms = spec.llms_txt ?? 'skip';
  const seed = depth === 0 ? new URL(t.url) : undefined;
  const proxy = (spec.options as { proxy?: string } | undefined)?.proxy;
  const oneHop = async (urls: string[]) => {
    const kept = await links.inScope(job.caller, urls, rules, spec.limit);
    found.links.push(...kept.map((l) => ({ ...l, depth: 1, foundOn: null })));
  };
  // The site's own list comes first: what it asks to be read is read before the limit is met.
  if (seed && llms !== 'skip') {
    await oneHop((await links.llmsTxt(job.caller, seed, signal, proxy)).map((l) => l.url));
  }
  if (spec.sitemap !== 'only' && llms !== 'only') {
    const inScope = await links.inScope(job.caller, page.links, rules, spec.limit);
    found.links.push(...inScope.map((l) => ({ ...l, depth: depth + 1, foundOn: t.idx })));
  }
  if (seed && spec.sitemap !== 'skip' && llms !== 'only') {
    const read = await links.sitemapEntries(job.caller, seed, (u) => rules.scope.allows(u), signal, proxy);
    await oneHop(read.entries.map((e) => e.url));
  }
  return found;
}
