import type { PageFindings } from '../batch/crawl-growth';
import { canonicalUrl } from '../crawl/canonical';
import type { LinkRules, SiteLinks } from '../crawl/site-links';
import type { CrawlSpec } from '../crawl/spec';
import type { Caller } from '../pages/caller-policy';
import type { FetchedPage, PendingTarget } from './attempt';

/**
 * What a crawl's fetched page adds to its job, before the lifecycle writes it: where it landed
 * (when a redirect took it to another URL), its digest, and the URLs it leads to within the
 * crawl's scope, robots.txt and depth. The seed adds its site's sitemap entries too (one hop from
 * it), unless the crawl skips them; with `sitemap: only` those are all a crawl follows.
 */
export async function findingsOf(
  links: SiteLinks,
  job: { caller: Caller; crawl: { spec: CrawlSpec; rules: LinkRules } },
  t: PendingTarget,
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
    const read = await links.sitemapEntries(job.caller, seed, (u) => rules.scope.allows(u), signal);
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
