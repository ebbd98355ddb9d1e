import { Injectable } from '@nestjs/common';
import { PageService } from '../pages/page.service';
import type { Caller } from '../pages/caller-policy';
import { TimeSlicer } from '../common/time-slice';
import { canonicalUrl } from './canonical';
import { checkPathRules, llmsTxtModeOf } from './request';
import { SiteLinks, linkRulesOf } from './site-links';
import type { LlmsTxtMode, SitemapMode } from './spec';

export const DEFAULT_MAP_LIMIT = 5000;
export const MAX_MAP_LIMIT = 30_000;

export interface MapRequest {
  url: string;
  limit?: number;
  sitemap?: SitemapMode;
  llms_txt?: LlmsTxtMode;
  include_paths?: string[];
  exclude_paths?: string[];
  include_regex?: string[];
  exclude_regex?: string[];
  allow_subdomains?: boolean;
  /** The seed page's fetch options (robots, headers, timeout_ms…). */
  options?: object;
}

export interface MapLink {
  url: string;
  /** The link's text on the seed page or in llms.txt; null for a sitemap's entry. */
  title: string | null;
  source: 'sitemap' | 'page' | 'llms_txt';
}

/**
 * A site's URLs without reading its pages: the seed page's links (the whole page's, through the
 * page cache, as a crawl reads them), its llms.txt's links and its sitemaps' entries, in scope and
 * allowed by robots.txt, each canonical URL once: the seed first, then its links, then llms.txt's,
 * then the sitemaps'. `only` in one of `sitemap` and `llms_txt` is that source alone.
 */
@Injectable()
export class MapService {
  constructor(
    private readonly pages: PageService,
    private readonly links: SiteLinks,
  ) {}

  async map(caller: Caller, req: MapRequest, signal?: AbortSignal): Promise<{ links: MapLink[] }> {
    const limit = Math.min(req.limit ?? DEFAULT_MAP_LIMIT, MAX_MAP_LIMIT);
    const sitemap = req.sitemap ?? 'include';
    const llms = llmsTxtModeOf(req);
    checkPathRules(req);
    const rules = linkRulesOf({
      seed: req.url,
      include_paths: req.include_paths ?? [],
      exclude_paths: req.exclude_paths ?? [],
      include_regex: req.include_regex,
      exclude_regex: req.exclude_regex,
      allow_subdomains: req.allow_subdomains ?? false,
      allow_external: false,
      ignore_query: false,
      options: req.options,
    });
    const out: MapLink[] = [];
    const seen = new Set<string>();
    // Up to 30,000 links made canonical again: in slices, so the event loop is never held long.
    const slicer = new TimeSlicer();
    const add = (url: string, title: string | null, source: MapLink['source']) => {
      const c = canonicalUrl(url);
      if (!c || seen.has(c) || out.length >= limit) return;
      seen.add(c);
      out.push({ url, title, source });
    };
    const keep = async (urls: string[], title: (url: string) => string | null, source: MapLink['source']) => {
      const kept = await this.links.inScope(caller, urls, rules, limit);
      for (const l of kept) {
        if (slicer.due()) await slicer.turn();
        add(l.url, title(l.url), source);
      }
    };
    const proxy = (req.options as { proxy?: string } | undefined)?.proxy;
    if (sitemap !== 'only' && llms !== 'only') {
      // The seed page fails as a fetch would (blocked, robots, not found…): the caller is told.
      const page = await this.pages.fetchDetailed(caller, { ...req.options, url: req.url }, signal);
      const titles = new Map((page.pageLinks ?? []).map((l) => [l.url, l.text]));
      add(page.envelope.final_url, page.envelope.title || null, 'page');
      await keep([...titles.keys()], (u) => titles.get(u) || null, 'page');
    }
    if (llms !== 'skip' && out.length < limit) {
      const listed = await this.links.llmsTxt(caller, new URL(req.url), signal, proxy);
      const titles = new Map(listed.map((l) => [l.url, l.title]));
      await keep([...titles.keys()], (u) => titles.get(u) || null, 'llms_txt');
    }
    if (sitemap !== 'skip' && llms !== 'only' && out.length < limit) {
      const read = await this.links.sitemapEntries(
        caller,
        new URL(req.url),
        (u) => rules.scope.allows(u),
        signal,
        proxy,
      );
      await keep(
        read.entries.map((e) => e.url),
        () => null,
        'sitemap',
      );
    }
    return { links: out };
  }
}
