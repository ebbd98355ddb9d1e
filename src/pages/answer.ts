/**
 * One page's envelope for one call: the formats the caller asked for, each written from the one
 * extraction, within the caller's output cap.
 */
import { truncateUtf8 } from '../common/truncate';
import { withoutUserinfo } from '../common/urls';
import { sha256Hex } from '../dcache';
import { jsonFormats } from '../extract/json-page';
import { NO_METADATA } from '../extract/metadata';
import type { Format } from '../extract/write';
import type { FetchEnvelope } from './envelope';
import { linksWithin } from './links-budget';
import type { Page } from './page-loader';
import { isDocument, type StoredFormat } from './page-types';
import type { ActionResults } from '../render/render-types';
import type { PageChanges } from './changes';
import { countTokens, cutToTokens, TOKENIZER } from '../common/tokens';
import { chunksOf, DEFAULT_CHUNK_TOKENS, type ChunkAsk } from './chunks';

/**
 * A text an envelope's `formats` may hold: a content format, the page's html as served, or its
 * markdown in pieces ("chunks": a list, written from the markdown as sent).
 */
export type OutFormat = Format | 'raw_html' | 'chunks';
/** What `formats` may ask for: those texts, the links list, and the changes since the last fetch. */
export type AskedFormat = OutFormat | 'links' | 'changes';

/** What one call asks of a page. */
export interface Asked {
  /** `content`'s format: the caller's `format`, or markdown when it sends neither `format` nor `formats`. */
  content?: Format;
  /** The texts of `formats`, in the caller's order; undefined when it sent no `formats`. */
  formats?: OutFormat[];
  /** The links list (the option `links`, or "links" in `formats`). */
  links: boolean;
  /** The page's html as served ("raw_html" in `formats`): kept only when asked. */
  raw: boolean;
  /** The page against the caller's previous fetch ("changes" in `formats`; see changes.ts). */
  changes: boolean;
  /** `metadata.tokens`: asked by `tokens`, `max_tokens` or "chunks" (the count costs CPU). */
  tokens: boolean;
  /** At most this many tokens of text, shared like the byte cap. */
  maxTokens?: number;
  /** How "chunks" are cut, when asked. */
  chunks?: ChunkAsk;
}

export function askedOf(p: {
  format?: Format;
  formats?: AskedFormat[];
  links?: boolean;
  tokens?: boolean;
  max_tokens?: number;
  chunk_tokens?: number;
  chunk_overlap?: number;
}): Asked {
  const formats = p.formats?.filter((f): f is OutFormat => f !== 'links' && f !== 'changes');
  return {
    ...(p.format || !p.formats ? { content: p.format ?? 'markdown' } : {}),
    ...(formats ? { formats } : {}),
    links: p.links === true || (p.formats?.includes('links') ?? false),
    raw: p.formats?.includes('raw_html') ?? false,
    changes: p.formats?.includes('changes') ?? false,
    tokens: p.tokens === true || p.max_tokens !== undefined || (formats?.includes('chunks') ?? false),
    ...(p.max_tokens !== undefined ? { maxTokens: p.max_tokens } : {}),
    ...(formats?.includes('chunks')
      ? { chunks: { tokens: p.chunk_tokens ?? DEFAULT_CHUNK_TOKENS, overlap: p.chunk_overlap ?? 0 } }
      : {}),
  };
}

/** Every format the page is written in for this call, each once (the html as served is kept, not written). */
export function neededFormats(a: Asked): Format[] {
  const formats = (a.formats ?? []).filter((f): f is Format => f !== 'raw_html' && f !== 'chunks');
  // Changes are of the markdown, written whichever formats are asked; so are chunks.
  const compared: Format[] = a.changes || a.chunks ? ['markdown'] : [];
  return [...new Set([...(a.content ? [a.content] : []), ...formats, ...compared])];
}

interface Written {
  text: string;
  digest: () => string;
  /** Its tokens, counted once: kept with the cached text it is. */
  tokens: () => number;
  /** Cut before this call's cap (at the cache's cap, or written from a source that was). */
  truncated: boolean;
}

/** The page in one format, if it has been written in it (an html page's markdown and text may not). */
export function writtenIn(page: Page, f: OutFormat): Written | undefined {
  const m = page.meta;
  const source = {
    text: page.source,
    digest: () => page.digest,
    tokens: () => (m.source_tokens ??= countTokens(page.source)),
    truncated: m.truncated,
  };
  // As served: an html page's kept beside its article; a PDF's is the html read from it, a JSON
  // or text page's its text.
  if (f === 'raw_html' && m.kind === 'html') {
    const r = m.formats?.raw_html;
    return r && stored(r);
  }
  if (f === 'raw_html') return source;
  if (f === 'chunks') return writtenIn(page, 'markdown');
  // An html page's source is its article as html; a PDF's, its html.
  if (m.kind === 'html' || isDocument(m.kind)) {
    if (f === 'html') return source;
    const r = m.formats?.[f];
    return r && stored(r);
  }
  if (m.kind !== 'json' || f === 'text') return source;
  const text = jsonFormats(page.source, [f])[f]!;
  return { text, digest: () => sha256Hex(text), tokens: () => countTokens(text), truncated: m.truncated };
}

const stored = (r: StoredFormat): Written => ({
  text: r.text,
  digest: () => r.digest,
  tokens: () => (r.tokens ??= countTokens(r.text)),
  truncated: r.truncated,
});

/**
 * Byte budgets for texts that share a cap, max-min fair: each gets an equal share, and what a
 * shorter one leaves over goes to the others.
 */
export function shares(sizes: number[], cap: number): number[] {
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[a] - sizes[b]);
  const out = sizes.map(() => 0);
  let left = cap;
  order.forEach((i, k) => {
    out[i] = Math.min(sizes[i], Math.floor(left / (order.length - k)));
    left -= out[i];
  });
  return out;
}

/**
 * The envelope: `content` (with `format`) and each text of `formats` share the caps, fairly (see
 * shares): first `max_tokens`, then the bytes; the links fill what they leave, in document order.
 * `metadata.tokens`, when asked, counts the first text sent (`content`, or with `formats` alone
 * their first).
 */
export function envelopeOf(url: string, asked: Asked, page: Page, outputCap: number): FetchEnvelope {
  const formats = asked.formats ?? [];
  // A screenshot counts in the cap first: one that does not fit is left out (truncated).
  const shot = page.meta.screenshot;
  const shotFits = shot !== undefined && shot.data.length <= outputCap;
  const acts =
    page.meta.actions && actionsWithin(page.meta.actions, outputCap - (shotFits ? shot.data.length : 0));
  const cap = outputCap - (shotFits ? shot.data.length : 0) - (acts?.bytes ?? 0);
  const parts = [...(asked.content ? [asked.content] : []), ...formats].map((f) => writtenIn(page, f)!);
  const byTokens = tokenCuts(parts, asked.maxTokens);
  const budgets = shares(
    byTokens.map((t) => Buffer.byteLength(t.text, 'utf8')),
    cap,
  );
  const cuts = byTokens.map((t, i) => {
    const c = truncateUtf8(t.text, budgets[i]);
    return { ...c, truncated: c.truncated || t.truncated, tokens: c.truncated ? undefined : t.tokens };
  });
  const textBytes = cuts.reduce((n, c) => n + c.bytes, 0);
  const bytes = textBytes + (shotFits ? shot.data.length : 0) + (acts?.bytes ?? 0);
  const links = asked.links ? linksWithin(page.meta.links ?? [], cap - textBytes) : undefined;
  const cut =
    cuts.some((c, i) => c.truncated || parts[i].truncated) ||
    (shot !== undefined && !shotFits) ||
    acts?.cut === true;
  const first = asked.content ? cuts[0] : undefined;
  const offset = asked.content ? 1 : 0;
  // Chunks first: they count the markdown's tokens once, and its count, asked next, is that one.
  const texts = formats.map((f, i) => {
    const text = cuts[offset + i].text;
    return [f, f === 'chunks' ? chunksOf(text, asked.chunks!) : text] as const;
  });
  const tokens = !asked.tokens
    ? undefined
    : cuts.length === 0
      ? 0
      : (cuts[0].tokens ?? (cuts[0].truncated ? countTokens(cuts[0].text) : parts[0].tokens()));
  return {
    url: withoutUserinfo(url),
    final_url: page.meta.final_url,
    status: page.meta.status,
    content_type: page.meta.content_type,
    title: page.meta.title,
    ...(asked.content ? { format: asked.content } : {}),
    content: first?.text ?? '',
    bytes,
    truncated: cut || (links !== undefined && (page.meta.links_cut === true || links.cut)),
    cached: page.cached,
    revalidated: page.revalidated ?? false,
    verdict: page.meta.verdict ?? 'ok',
    ...(page.meta.verdict_hint ? { verdict_hint: page.meta.verdict_hint } : {}),
    rendered: page.meta.browser !== undefined,
    ...(page.meta.browser ? { render: page.meta.browser } : {}),
    ...(shotFits ? { screenshot: shot } : {}),
    ...(acts ? { actions: acts.results } : {}),
    metadata:
      tokens === undefined
        ? (page.meta.metadata ?? NO_METADATA)
        : { ...(page.meta.metadata ?? NO_METADATA), tokens, tokenizer: TOKENIZER },
    ...(asked.formats ? { formats: Object.fromEntries(texts) } : {}),
    ...(links ? { links: links.links } : {}),
    fetched_at: new Date(page.fetchedAt * 1000).toISOString(),
    // `content`'s digest; with `formats` alone, the page's (its source's, whatever was asked).
    digest: `sha256:${!first ? page.digest : first.truncated ? sha256Hex(first.text) : parts[0].digest()}`,
  };
}

/**
 * Each text within its share of `max` tokens (when asked): the tokens of those counted, whether
 * cut.
 */
function tokenCuts(
  parts: Written[],
  max: number | undefined,
): { text: string; tokens?: number; truncated: boolean }[] {
  if (max === undefined) return parts.map((w) => ({ text: w.text, truncated: false }));
  const counts = parts.map((w) => w.tokens());
  const budgets = shares(counts, max);
  return parts.map((w, i) =>
    counts[i] <= budgets[i]
      ? { text: w.text, tokens: counts[i], truncated: false }
      : cutToTokens(w.text, budgets[i], counts[i]),
  );
}

/**
 * The envelope with the page's changes: the diff's text counts in `bytes` and fills what the
 * rest left of the cap (cut past it: `truncated`).
 */
export function withChanges(e: FetchEnvelope, c: PageChanges | undefined, cap: number): FetchEnvelope {
  if (!c) return e;
  const cut = truncateUtf8(c.diff.text, Math.max(0, cap - e.bytes));
  return {
    ...e,
    changes: { ...c, diff: { ...c.diff, text: cut.text } },
    bytes: e.bytes + cut.bytes,
    truncated: e.truncated || cut.truncated,
  };
}

/**
 * The actions' results within `cap` bytes (a screenshot's base64, a scrape's html, a return's
 * JSON), after the screenshot and before the texts: each list keeps its items in order while they
 * fit; the first that does not is left out with the rest of its list (`cut`).
 */
function actionsWithin(
  r: ActionResults,
  cap: number,
): { results: ActionResults; bytes: number; cut: boolean } {
  let bytes = 0;
  let cut = false;
  const keep = <T>(items: T[], size: (t: T) => number): T[] => {
    const out: T[] = [];
    for (const item of items) {
      const n = size(item);
      if (bytes + n > cap) {
        cut = true;
        break;
      }
      bytes += n;
      out.push(item);
    }
    return out;
  };
  const results = {
    screenshots: keep(r.screenshots, (s) => s.data.length),
    scrapes: keep(r.scrapes, (s) => Buffer.byteLength(s.html, 'utf8')),
    javascriptReturns: keep(r.javascriptReturns, (j) =>
      Buffer.byteLength(JSON.stringify(j.value ?? null), 'utf8'),
    ),
  };
  return { results, bytes, cut };
}
