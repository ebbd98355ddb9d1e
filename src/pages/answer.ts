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
import type { ActionResults } from '../render/render-types';
import type { PageChanges } from './changes';

/** A text an envelope's `formats` may hold: a content format, or the page's html as served. */
export type OutFormat = Format | 'raw_html';
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
}

export function askedOf(p: { format?: Format; formats?: AskedFormat[]; links?: boolean }): Asked {
  const formats = p.formats?.filter((f): f is OutFormat => f !== 'links' && f !== 'changes');
  return {
    ...(p.format || !p.formats ? { content: p.format ?? 'markdown' } : {}),
    ...(formats ? { formats } : {}),
    links: p.links === true || (p.formats?.includes('links') ?? false),
    raw: p.formats?.includes('raw_html') ?? false,
    changes: p.formats?.includes('changes') ?? false,
  };
}

/** Every format the page is written in for this call, each once (the html as served is kept, not written). */
export function neededFormats(a: Asked): Format[] {
  const formats = (a.formats ?? []).filter((f): f is Format => f !== 'raw_html');
  // Changes are of the markdown, written whichever formats are asked.
  const compared: Format[] = a.changes ? ['markdown'] : [];
  return [...new Set([...(a.content ? [a.content] : []), ...formats, ...compared])];
}

interface Written {
  text: string;
  digest: () => string;
  /** Cut before this call's cap (at the cache's cap, or written from a source that was). */
  truncated: boolean;
}

/** The page in one format, if it has been written in it (an html page's markdown and text may not). */
export function writtenIn(page: Page, f: OutFormat): Written | undefined {
  const m = page.meta;
  const source = { text: page.source, digest: () => page.digest, truncated: m.truncated };
  // As served: an html page's kept beside its article; a PDF's is the html read from it, a JSON
  // or text page's its text.
  if (f === 'raw_html' && m.kind === 'html') {
    const r = m.formats?.raw_html;
    return r && { text: r.text, digest: () => r.digest, truncated: r.truncated };
  }
  if (f === 'raw_html') return source;
  // An html page's source is its article as html; a PDF's, its html.
  if (m.kind === 'html' || m.kind === 'pdf') {
    if (f === 'html') return source;
    const r = m.formats?.[f];
    return r && { text: r.text, digest: () => r.digest, truncated: r.truncated };
  }
  if (m.kind !== 'json' || f === 'text') return source;
  const text = jsonFormats(page.source, [f])[f]!;
  return { text, digest: () => sha256Hex(text), truncated: m.truncated };
}

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
 * The envelope: `content` (with `format`) and each text of `formats` share the cap, fairly (see
 * shares); the links fill what they leave, in document order.
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
  const budgets = shares(
    parts.map((w) => Buffer.byteLength(w.text, 'utf8')),
    cap,
  );
  const cuts = parts.map((w, i) => truncateUtf8(w.text, budgets[i]));
  const textBytes = cuts.reduce((n, c) => n + c.bytes, 0);
  const bytes = textBytes + (shotFits ? shot.data.length : 0) + (acts?.bytes ?? 0);
  const links = asked.links ? linksWithin(page.meta.links ?? [], cap - textBytes) : undefined;
  const cut =
    cuts.some((c, i) => c.truncated || parts[i].truncated) ||
    (shot !== undefined && !shotFits) ||
    acts?.cut === true;
  const first = asked.content ? cuts[0] : undefined;
  const offset = asked.content ? 1 : 0;
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
    metadata: page.meta.metadata ?? NO_METADATA,
    ...(asked.formats
      ? { formats: Object.fromEntries(formats.map((f, i) => [f, cuts[offset + i].text])) }
      : {}),
    ...(links ? { links: links.links } : {}),
    fetched_at: new Date(page.fetchedAt * 1000).toISOString(),
    // `content`'s digest; with `formats` alone, the page's (its source's, whatever was asked).
    digest: `sha256:${!first ? page.digest : first.truncated ? sha256Hex(first.text) : parts[0].digest()}`,
  };
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
