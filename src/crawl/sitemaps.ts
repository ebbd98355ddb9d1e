import { abortable } from '../common/abortable';
import { TimeSlicer } from '../common/time-slice';
import { readSitemapBody } from './sitemap-body';
import { MAX_SITEMAP_URL, SITEMAP_LIMITS, type SitemapLimits } from './sitemap-limits';
import type { Found } from './sitemap-xml';

export { MAX_SITEMAP_URL, SITEMAP_LIMITS, type SitemapLimits };

/** Fetches one sitemap file, reading at most `maxBytes` of its body (a longer one is cut there). */
export interface SitemapFetch {
  (url: string, maxBytes: number): Promise<{ status: number; body: Buffer; contentType: string }>;
}

export interface SitemapEntry {
  url: string;
}

export interface SitemapResult {
  entries: SitemapEntry[];
  /** A cap was reached, a file was cut, or the read was aborted, with more left to read. */
  truncated: boolean;
  /** Files that failed: an answer not 2xx, a fetch that threw, a gzip that would not inflate. */
  errors: number;
}

/**
 * The page URLs of sitemaps, breadth first from `start` (robots.txt's Sitemap lines and
 * `/sitemap.xml`): a `<sitemapindex>`'s `<sitemap><loc>`s join the queue (each file once, so a
 * cycle ends), a `<urlset>`'s `<url><loc>`s are entries, and a body that is not XML is read as
 * one URL per line. A body starting with gzip's magic bytes is inflated whatever its name or type.
 * Entries are absolute http(s) URLs of at most MAX_SITEMAP_URL characters that `keep` takes, each
 * once. A file that fails counts in `errors` and is skipped (a gzip that breaks partway keeps the
 * entries read before the fault), except a fetch refused as `blocked_address` (a sitemap the
 * caller may not reach), which is just skipped. Each file is read as a stream (sitemap-body.ts).
 * The limits stop the read where they are reached; so does `signal`, and what was read so far is
 * the answer.
 */
export async function readSitemaps(
  start: string[],
  get: SitemapFetch,
  o: { limits?: SitemapLimits; keep?: (url: URL) => boolean; signal?: AbortSignal } = {},
): Promise<SitemapResult> {
  const limits = o.limits ?? SITEMAP_LIMITS;
  /** Files in the order they are read; a Set's iteration reaches what is added during it. */
  const queue = new Set<string>();
  const enqueue = (raw: string) => {
    const u = httpUrl(raw);
    if (u) queue.add(u.href.slice(0, u.href.length - u.hash.length));
  };
  start.forEach(enqueue);

  const seen = new Set<string>();
  const result: SitemapResult = { entries: [], truncated: false, errors: 0 };
  const addEntry = (raw: string): boolean => {
    const u = httpUrl(raw);
    if (!u || u.href.length > MAX_SITEMAP_URL || seen.has(u.href) || (o.keep && !o.keep(u))) return true;
    if (result.entries.length >= limits.entries) return false;
    seen.add(u.href);
    result.entries.push({ url: u.href });
    return true;
  };

  // One slicer for the whole read: `keep` runs for each entry, inside the slices it measures.
  const slicer = new TimeSlicer();
  const take = (f: Found): boolean => {
    if (f.kind === 'entry') return addEntry(f.url);
    enqueue(f.url);
    return true;
  };
  let used = 0;
  let files = 0;
  for (const url of queue) {
    if (o.signal?.aborted || files++ >= limits.files || used >= limits.bytes) {
      result.truncated = true;
      break;
    }
    const left = limits.bytes - used;
    const body = await fetchBody(url, left, get, o.signal);
    if (body === 'aborted') {
      result.truncated = true;
      break;
    }
    if (body === 'failed') result.errors++;
    if (body === 'failed' || body === 'refused') continue;
    // A body of the whole budget may have been cut by it: its last, perhaps partial, URL is not
    // taken, and nothing is read after it.
    const read = await readSitemapBody(body.length > left ? body.subarray(0, left) : body, {
      room: left,
      cut: body.length >= left,
      take,
      slicer,
      signal: o.signal,
    });
    used += read.bytes;
    if (read.outcome !== 'done' || read.cut) {
      result.truncated = true;
      break;
    }
    if (read.failed) result.errors++;
  }
  return result;
}

/** The body of a 2xx answer, or why there is none. */
async function fetchBody(
  url: string,
  maxBytes: number,
  get: SitemapFetch,
  signal?: AbortSignal,
): Promise<Buffer | 'aborted' | 'refused' | 'failed'> {
  try {
    // On abort the wait ends; the fetch behind it is the port's to end.
    const answer = await (signal ? abortable(get(url, maxBytes), signal) : get(url, maxBytes));
    return answer.status >= 200 && answer.status < 300 ? answer.body : 'failed';
  } catch (err) {
    if (signal?.aborted) return 'aborted';
    return (err as { code?: unknown } | null)?.code === 'blocked_address' ? 'refused' : 'failed';
  }
}

/** An absolute http(s) URL of at most MAX_SITEMAP_URL characters, else undefined. */
function httpUrl(raw: string): URL | undefined {
  if (raw.length > MAX_SITEMAP_URL) return undefined;
  try {
    const u = new URL(raw);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname ? u : undefined;
  } catch {
    return undefined;
  }
}
