/**
 * Firecrawl's v1 API as its v2: a v1 request's body in v2's shape, so the one translation to
 * sift's runs (firecrawl-mapping.ts), and the few answers whose v1 shape differs from v2's. Pure
 * functions; what v1 asks that sift cannot do is a FirecrawlUnsupported naming the field.
 */
import { FirecrawlUnsupported } from './firecrawl-mapping';

type Body = Record<string, unknown>;

const isPlain = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The body less the v1 fields translated into others. */
const without = (body: Body, ...keys: string[]): Body =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !keys.includes(k)));

/** A v1 boolean field read to translate it: any other type is 400 naming it. */
function flag(body: Body, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || typeof v === 'boolean') return v;
  throw new FirecrawlUnsupported(field, 'must be a boolean value');
}

/** v1 scrape options (a scrape's, a batch scrape's, a crawl's scrapeOptions): formats as v2 writes them. */
export function scrapeFromV1(body: Body): Body {
  const { formats } = body;
  if (!Array.isArray(formats) || !formats.includes('screenshot@fullPage')) return body;
  return {
    ...body,
    formats: (formats as unknown[]).map((f) =>
      f === 'screenshot@fullPage' ? { type: 'screenshot', fullPage: true } : f,
    ),
  };
}

/**
 * A v1 crawl: `allowBackwardLinks` is v2's `crawlEntireDomain`, `ignoreSitemap` its `sitemap:
 * "skip"`; `maxDepth` counts a path's segments, which sift does not (400: `maxDiscoveryDepth` counts
 * link hops).
 */
export function crawlFromV1(body: Body): Body {
  const { scrapeOptions } = body;
  const rest = without(body, 'allowBackwardLinks', 'ignoreSitemap', 'scrapeOptions');
  if (body.maxDepth !== undefined)
    throw new FirecrawlUnsupported(
      'maxDepth',
      "counts the path's segments, which this server does not: send maxDiscoveryDepth (link hops)",
    );
  const backward = flag(body, 'allowBackwardLinks');
  const noSitemap = flag(body, 'ignoreSitemap');
  return {
    ...rest,
    ...(backward !== undefined && rest.crawlEntireDomain === undefined
      ? { crawlEntireDomain: backward }
      : {}),
    ...(noSitemap !== undefined ? { sitemap: noSitemap ? 'skip' : 'include' } : {}),
    ...(scrapeOptions !== undefined
      ? { scrapeOptions: isPlain(scrapeOptions) ? scrapeFromV1(scrapeOptions) : scrapeOptions }
      : {}),
  };
}

/** A v1 map: `ignoreSitemap` and `sitemapOnly` are v2's `sitemap`; `search` ranks by a query sift does not run. */
export function mapFromV1(body: Body): Body {
  const rest = without(body, 'ignoreSitemap', 'sitemapOnly');
  if (body.search !== undefined)
    throw new FirecrawlUnsupported(
      'search',
      'is not supported by this server: its map lists the URLs unranked',
    );
  const only = flag(body, 'sitemapOnly');
  const skip = flag(body, 'ignoreSitemap');
  if (only && skip) throw new FirecrawlUnsupported('sitemapOnly', 'and ignoreSitemap cannot both be true');
  const sitemap = only ? 'only' : skip ? 'skip' : skip === false || only === false ? 'include' : undefined;
  return { ...rest, ...(sitemap ? { sitemap } : {}) };
}

/** A v1 map's links are URLs (v2's are objects with a title). */
export const mapLinksV1 = (links: { url: string }[]): string[] => links.map((l) => l.url);
