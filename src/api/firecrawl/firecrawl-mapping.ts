/**
 * Firecrawl's v2 request and response shapes, translated to and from sift's own: pure functions,
 * no rule of sift's is checked here (sift's DTOs check the translated body). What sift cannot do
 * is a FirecrawlUnsupported naming the field, never silently dropped.
 */
import type { FetchEnvelope } from '../../pages/envelope';
import type { JobStatus } from '../../common/job-status';
import { actionsOf, profileOf, proxyOf } from './firecrawl-reach';
import { FirecrawlUnsupported } from './firecrawl-unsupported';
import { changeTrackingDoc, changeTrackingOf } from './firecrawl-changes';

export { FirecrawlUnsupported };

type Body = Record<string, unknown>;

/** Fields Firecrawl's SDK sends that change nothing here. */
const IGNORED = new Set(['origin', 'integration']);

/** The scrape options sift honours (beside `url`); every other field of a scrape is 400. */
const SCRAPE_FIELDS = new Set([
  'formats',
  'onlyMainContent',
  'includeTags',
  'excludeTags',
  'waitFor',
  'timeout',
  'maxAge',
  'headers',
  'actions',
  'proxy',
  'location',
  'profile',
]);

/** What a document carries: sift's formats and the screenshot, as Firecrawl names them. */
export interface Wanted {
  markdown: boolean;
  html: boolean;
  rawHtml: boolean;
  links: boolean;
  screenshot: boolean;
  /** The screenshot is of the whole page. */
  fullPage?: boolean;
  /** changeTracking: the page against the previous scrape, with the diff when asked. */
  changeTracking?: { diff: boolean };
  /** sift's own format `chunks` ({type: "chunks", chunkTokens?, chunkOverlap?}): the markdown in pieces. */
  chunks?: { tokens?: unknown; overlap?: unknown };
}

/** What sift's `chunks` format takes. */
const CHUNK_KEYS = new Set(['type', 'chunkTokens', 'chunkOverlap']);

function check(body: Body, allowed: Set<string>, where = ''): void {
  for (const k of Object.keys(body)) {
    if (!allowed.has(k) && !IGNORED.has(k)) throw new FirecrawlUnsupported(`${where}${k}`);
  }
}

/**
 * Firecrawl's `formats` onto sift's: markdown, html (sift's html is the main content's, as
 * Firecrawl's html is with onlyMainContent), rawHtml (sift's raw_html), links (the whole page's),
 * screenshot (a render).
 */
export function wantedOf(formats: unknown, where = ''): Wanted {
  const w: Wanted = { markdown: false, html: false, rawHtml: false, links: false, screenshot: false };
  if (formats === undefined) return { ...w, markdown: true };
  if (!Array.isArray(formats)) throw new FirecrawlUnsupported(`${where}formats`, 'must be a list');
  for (const f of formats as unknown[]) {
    const o = (typeof f === 'object' && f !== null ? f : { type: f }) as Body;
    const type = String(o.type);
    if (type === 'screenshot' && Object.keys(o).every((k) => k === 'type' || k === 'fullPage')) {
      w.screenshot = true;
      if (o.fullPage === true) w.fullPage = true;
    } else if (type === 'screenshot')
      throw new FirecrawlUnsupported(
        `${where}formats: screenshot.${Object.keys(o).find((k) => k !== 'type' && k !== 'fullPage')}`,
      );
    else if (
      (type === 'markdown' || type === 'html' || type === 'rawHtml' || type === 'links') &&
      Object.keys(o).length === 1
    )
      w[type] = true;
    else if (type === 'changeTracking') w.changeTracking = changeTrackingOf(o, where);
    else if (type === 'chunks' && Object.keys(o).every((k) => CHUNK_KEYS.has(k)))
      w.chunks = { tokens: o.chunkTokens, overlap: o.chunkOverlap };
    else throw new FirecrawlUnsupported(`${where}formats: ${type.slice(0, 40)}`);
  }
  return w;
}

/** A Firecrawl scrape's options as sift's fetch options (no `url`), and the document's formats. */
export function fetchOptionsOf(
  body: Body,
  where = '',
  proxies: ReadonlySet<string> = new Set(),
): { options: Body; wanted: Wanted } {
  check(body, SCRAPE_FIELDS, where);
  const wanted = wantedOf(body.formats, where);
  const formats = [
    ...(wanted.markdown ? ['markdown'] : []),
    ...(wanted.html ? ['html'] : []),
    ...(wanted.rawHtml ? ['raw_html'] : []),
    ...(wanted.links ? ['links'] : []),
    ...(wanted.changeTracking ? ['changes'] : []),
    ...(wanted.chunks ? ['chunks'] : []),
  ];
  // Markdown alone (Firecrawl's default) is sift's `format`: a flat body, checked by the DTO's fast path.
  const markdownOnly = formats.length === 0 || (formats.length === 1 && wanted.markdown);
  const options: Body = markdownOnly ? { format: 'markdown' } : { formats };
  if (wanted.screenshot)
    Object.assign(options, {
      screenshot: true,
      render: 'always',
      ...(wanted.fullPage ? { full_page: true } : {}),
    });
  const set = (k: string, v: unknown) => v !== undefined && (options[k] = v);
  // The whole page (onlyMainContent: false) is its body, unless includeTags say which parts.
  set('include_selectors', body.includeTags ?? (body.onlyMainContent === false ? ['body'] : undefined));
  set('exclude_selectors', body.excludeTags);
  set('wait_ms', body.waitFor);
  set('timeout_ms', body.timeout);
  set('max_age_s', typeof body.maxAge === 'number' ? Math.floor(body.maxAge / 1000) : body.maxAge);
  set('headers', body.headers);
  set('actions', actionsOf(body.actions, where));
  set('proxy', proxyOf(body, where, proxies));
  set('profile', profileOf(body.profile, where));
  set('chunk_tokens', wanted.chunks?.tokens);
  set('chunk_overlap', wanted.chunks?.overlap);
  return { options, wanted };
}

/** A Firecrawl document from sift's envelope: the formats asked, and Firecrawl's metadata. */
export function documentOf(e: FetchEnvelope, wanted: Wanted): Body {
  const f = e.formats ?? {};
  const m = e.metadata;
  return {
    ...(wanted.markdown ? { markdown: f.markdown ?? e.content } : {}),
    ...(wanted.html ? { html: f.html ?? '' } : {}),
    ...(wanted.rawHtml ? { rawHtml: f.raw_html ?? '' } : {}),
    ...(wanted.links ? { links: (e.links ?? []).map((l) => l.url) } : {}),
    ...(wanted.screenshot && e.screenshot
      ? { screenshot: `data:${e.screenshot.type};base64,${e.screenshot.data}` }
      : {}),
    ...(wanted.changeTracking && e.changes
      ? { changeTracking: changeTrackingDoc(e.changes, wanted.changeTracking.diff) }
      : {}),
    ...(wanted.chunks ? { chunks: f.chunks ?? [] } : {}),
    ...(e.actions
      ? {
          actions: {
            screenshots: e.actions.screenshots.map((s) => `data:${s.type};base64,${s.data}`),
            scrapes: e.actions.scrapes,
            javascriptReturns: e.actions.javascriptReturns,
            pdfs: [],
          },
        }
      : {}),
    metadata: {
      title: e.title,
      description: m.description ?? undefined,
      language: m.language ?? undefined,
      sourceURL: e.url,
      url: e.final_url,
      statusCode: e.status,
      contentType: e.content_type,
      ...(m.author ? { author: m.author } : {}),
      ...(m.published_at ? { publishedTime: m.published_at } : {}),
      ...(m.site_name ? { ogSiteName: m.site_name } : {}),
      ...(m.image ? { ogImage: m.image } : {}),
      ...(m.canonical_url ? { canonicalUrl: m.canonical_url } : {}),
      cacheState: e.cached ? 'hit' : 'miss',
      cachedAt: e.fetched_at,
    },
  };
}

/** Which formats the stored envelope answers: what the job asked (its `formats` and screenshot). */
export function wantedOfEnvelope(e: FetchEnvelope): Wanted {
  const f = e.formats ?? {};
  return {
    markdown: f.markdown !== undefined || e.format === 'markdown',
    html: f.html !== undefined,
    rawHtml: f.raw_html !== undefined,
    links: e.links !== undefined,
    screenshot: e.screenshot !== undefined,
    ...(e.changes ? { changeTracking: { diff: true } } : {}),
    ...(f.chunks ? { chunks: {} } : {}),
  };
}

/** A job's status as Firecrawl's. */
export function statusOf(s: JobStatus): 'scraping' | 'completed' | 'failed' | 'cancelled' {
  if (s === 'queued' || s === 'running') return 'scraping';
  if (s === 'done' || s === 'partial') return 'completed';
  return s;
}

/** A batch scrape's body as sift's batch submission. */
export function batchOf(body: Body, proxies?: ReadonlySet<string>): Body {
  const { urls, ignoreInvalidURLs, ...scrape } = body;
  if (!Array.isArray(urls)) throw new FirecrawlUnsupported('urls', 'must be a list of URLs');
  const { options } = fetchOptionsOf(scrape, '', proxies);
  return {
    targets: (urls as unknown[]).map((url) => ({ url })),
    options,
    ...(ignoreInvalidURLs !== undefined ? { ignore_invalid_urls: ignoreInvalidURLs } : {}),
  };
}

const CRAWL_FIELDS = new Set([
  'url',
  'limit',
  'maxDiscoveryDepth',
  'crawlEntireDomain',
  'includePaths',
  'excludePaths',
  'allowSubdomains',
  'allowExternalLinks',
  'ignoreQueryParameters',
  'sitemap',
  'scrapeOptions',
]);

/**
 * The path a crawl from `url` keeps to, as Firecrawl's: the seed's path and below (a crawl from
 * `/docs/guide/` never reaches `/docs/`), unless `crawlEntireDomain`; none from the site's root.
 */
function pathPrefixOf(url: unknown, entireDomain: unknown): string | undefined {
  if (entireDomain === true || typeof url !== 'string') return undefined;
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined; // the URL's own check refuses it, in sift's words
  }
  return path === '/' ? undefined : path;
}

/** A Firecrawl crawl's body as sift's crawl submission. */
export function crawlOf(body: Body, proxies?: ReadonlySet<string>): Body {
  check(body, CRAWL_FIELDS);
  const scrape = (body.scrapeOptions ?? {}) as Body;
  if (typeof scrape !== 'object' || Array.isArray(scrape))
    throw new FirecrawlUnsupported('scrapeOptions', 'must be an object');
  const out: Body = { url: body.url, options: fetchOptionsOf(scrape, 'scrapeOptions.', proxies).options };
  const set = (k: string, v: unknown) => v !== undefined && v !== null && (out[k] = v);
  set('limit', body.limit);
  set('max_depth', body.maxDiscoveryDepth);
  set('path_prefix', pathPrefixOf(body.url, body.crawlEntireDomain));
  // Firecrawl's path patterns are regular expressions searched for in the path: sift's *_regex.
  set('include_regex', body.includePaths);
  set('exclude_regex', body.excludePaths);
  set('allow_subdomains', body.allowSubdomains);
  set('allow_external', body.allowExternalLinks);
  set('ignore_query', body.ignoreQueryParameters);
  set('sitemap', body.sitemap);
  return out;
}

const MAP_FIELDS = new Set([
  'url',
  'limit',
  'sitemap',
  'includeSubdomains',
  'ignoreQueryParameters',
  'timeout',
]);

/** A Firecrawl map's body as sift's map request. */
export function mapOf(body: Body): Body {
  check(body, MAP_FIELDS);
  // sift's map lists each canonical URL once; a query is kept, so only false is honoured.
  if (body.ignoreQueryParameters === true)
    throw new FirecrawlUnsupported('ignoreQueryParameters', 'true is not supported by map');
  const out: Body = { url: body.url };
  const set = (k: string, v: unknown) => v !== undefined && v !== null && (out[k] = v);
  set('limit', body.limit);
  set('sitemap', body.sitemap);
  set('allow_subdomains', body.includeSubdomains);
  if (body.timeout !== undefined) out.options = { timeout_ms: body.timeout };
  return out;
}
