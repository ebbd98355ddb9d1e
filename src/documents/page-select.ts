import type { PageRange } from './page-ranges';

/**
 * The pages to read, in document order and each once: those `ranges` name (all when none) that
 * the document has, at most `maxPages` of them; `cut` when a page of the document is left out.
 */
export function selectPages(
  ranges: PageRange[] | undefined,
  total: number,
  maxPages: number,
): { pages: number[]; cut: boolean } {
  const wanted = new Set<number>();
  const all = !ranges || ranges.length === 0;
  const spans = all ? [{ first: 1, last: total }] : ranges;
  // Sorted spans, clipped to the document, walked in order: never more than maxPages + 1 numbers
  // are made, whatever the ranges say ("1-10000000" on a million-page claim).
  const clipped = spans
    .map((r) => ({ first: r.first, last: Math.min(r.last ?? total, total) }))
    .filter((r) => r.first <= r.last)
    .sort((a, b) => a.first - b.first);
  for (const r of clipped) {
    for (let p = r.first; p <= r.last && wanted.size <= maxPages; p++) wanted.add(p);
    if (wanted.size > maxPages) break;
  }
  const pages = [...wanted].sort((a, b) => a - b);
  const limited = pages.length > maxPages;
  const chosen = pages.slice(0, Math.max(0, maxPages));
  return { pages: chosen, cut: limited || chosen.length < total };
}

/** Whether page `n` (from 1: a slide, a sheet, a chapter) is among those `ranges` name (all when none). */
export const isNamed = (ranges: PageRange[] | undefined, n: number): boolean =>
  !ranges?.length || ranges.some((r) => n >= r.first && (r.last === undefined || n <= r.last));
