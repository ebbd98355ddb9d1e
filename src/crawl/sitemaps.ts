import { createGunzip } from 'node:zlib';
import { Tokenizer } from 'htmlparser2';
import { abortable } from '../common/abortable';

/** Fetches one sitemap file, reading at most `maxBytes` of its body (a longer one is cut there). */
export interface SitemapFetch {
  (url: string, maxBytes: number): Promise<{ status: number; body: Buffer; contentType: string }>;
}

export interface SitemapLimits {
  /** Files fetched, failures included. */
  files: number;
  /** Entries kept. */
  entries: number;
  /** Bytes read over every file, after gunzip. */
  bytes: number;
}

/** The crawl's caps (SPEC "Crawl and map"): 50 files, 50,000 entries, 50 MiB. */
export const SITEMAP_LIMITS: SitemapLimits = { files: 50, entries: 50_000, bytes: 50 * 1024 * 1024 };
/** The sitemap protocol's longest URL; a longer `<loc>` or line is skipped. */
export const MAX_SITEMAP_URL = 2048;
/** Text tokenized between two turns of the event loop. */
const SLICE_CHARS = 1024 * 1024;

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
 * once. A file that fails counts in `errors` and is skipped, except a fetch refused as
 * `blocked_address` (a sitemap the caller may not reach), which is just skipped. The limits stop
 * the read where they are reached; so does `signal`, and what was read so far is the answer.
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
    let cut = body.length >= left;
    let text: Buffer = body.length > left ? body.subarray(0, left) : body;
    if (isGzip(text)) {
      const inflated = await gunzipUpTo(text, left);
      used += inflated.out.length;
      if (inflated.failed && !cut) {
        result.errors++;
        continue;
      }
      cut ||= inflated.full;
      text = inflated.out;
    } else {
      used += text.length;
    }
    const str = text.toString('utf8');
    const read = /^\s*</.test(str.slice(0, 4096))
      ? await readXml(str, enqueue, addEntry, o.signal)
      : await readLines(str, cut, addEntry, o.signal);
    if (read !== 'done' || cut) {
      result.truncated = true;
      break;
    }
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

function isGzip(body: Buffer): boolean {
  return body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b;
}

/**
 * `body` inflated, at most `max` bytes of it: `full` when there was more (the rest is never
 * inflated, so a small bomb costs `max` at most), `failed` when the stream is not gzip or ends early
 * (what came out before is kept, for a body that the byte budget cut).
 */
function gunzipUpTo(body: Buffer, max: number): Promise<{ out: Buffer; full: boolean; failed: boolean }> {
  return new Promise((resolve) => {
    const gunzip = createGunzip();
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (full: boolean, failed: boolean) => {
      if (settled) return;
      settled = true;
      gunzip.destroy();
      resolve({ out: Buffer.concat(chunks, size), full, failed });
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (settled) return;
      const room = max - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (chunk.length > room) finish(true, false);
    });
    gunzip.on('end', () => finish(false, false));
    gunzip.on('error', () => finish(false, true));
    gunzip.end(body);
  });
}

/** Takes an entry; false once the entry cap is passed. */
type Sink = (url: string) => boolean;

/** A plain-text sitemap: one URL per line (a cut body's last line may be partial: not read). */
async function readLines(
  text: string,
  cut: boolean,
  add: Sink,
  signal?: AbortSignal,
): Promise<'done' | 'full' | 'aborted'> {
  let sliceEnd = SLICE_CHARS;
  for (let at = 0; at < text.length;) {
    const nl = text.indexOf('\n', at);
    if (nl < 0 && cut) break;
    const end = nl < 0 ? text.length : nl;
    if (end - at <= MAX_SITEMAP_URL + 64) {
      const line = text.slice(at, end).trim();
      if (line && !add(line)) return 'full';
    }
    at = end + 1;
    if (at >= sliceEnd) {
      await turn();
      if (signal?.aborted) return 'aborted';
      sliceEnd = at + SLICE_CHARS;
    }
  }
  return 'done';
}

/**
 * An XML sitemap or index, through htmlparser2's tokenizer in XML mode (entities such as `&amp;`
 * decoded): a `<loc>` directly inside a `<url>` is an entry, inside a `<sitemap>` a file to read.
 * Names are compared without a namespace prefix. The tokenizer, not htmlparser2's Parser, because
 * the Parser keeps its element stack with unshift, quadratic in a hostile file's depth; here only a
 * depth count is kept. A `<loc>` counts only once closed, so a cut file's last one is not taken.
 */
async function readXml(
  text: string,
  enqueue: (url: string) => void,
  add: Sink,
  signal?: AbortSignal,
): Promise<'done' | 'full' | 'aborted'> {
  let depth = 0;
  /** Depth of the open `<url>` or `<sitemap>`, and which; -1 outside them. */
  let itemDepth = -1;
  let item = '';
  let opening = '';
  /** The open `<loc>`'s text so far; `long` once past the longest URL (the rest is not kept). */
  let loc: string | undefined;
  let long = false;
  let full = false;
  const name = (start: number, end: number) => {
    const n = text.slice(start, end).toLowerCase();
    return n.slice(n.indexOf(':') + 1);
  };
  const append = (s: string) => {
    if (loc === undefined || long) return;
    loc += s;
    long = loc.length > MAX_SITEMAP_URL + 256;
  };
  const tokenizer = new Tokenizer(
    { xmlMode: true, decodeEntities: true },
    {
      onopentagname(start, end) {
        opening = name(start, end);
      },
      onopentagend() {
        depth++;
        if (opening === 'url' || opening === 'sitemap') {
          itemDepth = depth;
          item = opening;
        } else if (opening === 'loc' && itemDepth >= 0 && depth === itemDepth + 1) {
          loc = '';
          long = false;
        }
      },
      onselfclosingtag() {},
      onclosetag(start, end) {
        const closing = name(start, end);
        if (closing === 'loc' && loc !== undefined) {
          const value = long ? '' : loc.trim();
          loc = undefined;
          if (value && item === 'sitemap') enqueue(value);
          else if (value && !full && !add(value)) full = true;
        }
        if (depth === itemDepth) itemDepth = -1;
        depth = Math.max(0, depth - 1);
      },
      ontext(start, end) {
        append(text.slice(start, end));
      },
      ontextentity(codepoint) {
        append(String.fromCodePoint(codepoint));
      },
      oncdata(start, end, endOffset) {
        append(text.slice(start, end - endOffset));
      },
      onattribdata() {},
      onattribentity() {},
      onattribend() {},
      onattribname() {},
      oncomment() {},
      ondeclaration() {},
      onprocessinginstruction() {},
      onend() {},
    },
  );
  // Offsets into `text` stay absolute across writes: each slice continues the last. A BOM is text
  // outside any element, so it is passed over.
  for (let at = 0; at < text.length && !full; at += SLICE_CHARS) {
    tokenizer.write(text.slice(at, at + SLICE_CHARS));
    if (full) break;
    await turn();
    if (signal?.aborted) return 'aborted';
  }
  return full ? 'full' : 'done';
}

/** One turn of the event loop, so a 50 MiB file does not hold it. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
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
