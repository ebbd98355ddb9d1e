/**
 * Where Firecrawl's API is served, and what its routes that sift does not serve answer: a 400
 * naming the route and why, never a 404 or 405 a client would take for a wrong URL.
 */
import type { Request } from 'express';

/**
 * Firecrawl's API: v2 under /v2 and /firecrawl/v2, v1 under /firecrawl/v1 (clients given
 * …/firecrawl as their API URL append /v1/… or /v2/…). The same routes serve both versions; a v1
 * request and its answer are translated (firecrawl-v1.ts).
 */
export const FIRECRAWL_MOUNTS = ['v2', 'firecrawl/v2', 'firecrawl/v1'];

/** A request to Firecrawl's v1 API, in v1's shapes. */
export const isV1 = (req: Request): boolean => req.path.startsWith('/firecrawl/v1/');

/** Paths of the Firecrawl-compatible API, whose errors are `{success: false, error, code}`. */
export const isFirecrawlPath = (path: string): boolean =>
  path === '/v2' || path.startsWith('/v2/') || path === '/firecrawl' || path.startsWith('/firecrawl/');

/** The URL of `route` (`crawl/ID`) in the API the caller reached: the same mount, the same version. */
export function apiUrl(req: Request, route: string): string {
  const mount = /^\/(?:firecrawl\/)?v\d+/.exec(req.path)?.[0] ?? '/v2';
  return `${req.protocol}://${req.get('host')}${mount}/${route}`;
}

/** Firecrawl's routes sift does not serve, by their first segments, and why. */
const NOT_SERVED: [RegExp, string][] = [
  [/^search\b/, 'sift does not search the web: it fetches, crawls and maps the URLs it is given'],
  [
    /^crawl\/params-preview$/,
    'it writes crawl options from a prompt with a language model, which sift does not run: send the options',
  ],
  [/^(extract|agent|deep-research)\b/, 'it needs a language model, which sift does not run'],
  [
    /^llmstxt\b/,
    "sift serves it as Firecrawl's v1 route (POST /firecrawl/v1/llmstxt, GET /firecrawl/v1/llmstxt/{id}) and as its own /v1/llmstxt",
  ],
  [/^(browser|scrape\/[^/]+\/interact)\b/, 'sift keeps no browser session between requests'],
  [/^parse\b/, 'send the document as a URL to scrape: sift fetches and reads it'],
  [/^monitor\b/, 'sift has no monitors on this API'],
];

/** What a request to a Firecrawl path that no route serves is told (answered 400). */
export function unservedRoute(method: string, path: string): string {
  const rest = path.replace(/^\/(firecrawl\/)?v\d+\/?/, '');
  const why = NOT_SERVED.find(([re]) => re.test(rest))?.[1] ?? 'it is not a route of this server';
  return `${method} ${path.slice(0, 200)} is not supported by this server: ${why}`;
}
