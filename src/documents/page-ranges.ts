import { invalidRequest } from '../common/errors';

/** Pages 1-based and inclusive; `last` undefined means "to the end" ("7-"). */
export interface PageRange {
  first: number;
  last?: number;
}

/** At most this many ranges in one `pages` option. */
export const MAX_PAGE_RANGES = 100;
const MAX_SPEC_LENGTH = 2000;
/** No page number past this is taken: no document has that many pages, and the number stays exact. */
const MAX_PAGE_NUMBER = 10_000_000;

/**
 * What is wrong with a `pages` option ("1-5,9", "3", "7-"), or undefined when it is good: ranges
 * of page numbers from 1, separated by commas, each first ≤ last, at most 100 of them.
 */
export function pageRangesError(spec: string): string | undefined {
  return parse(spec).error;
}

/** The ranges of a `pages` option; a bad one throws 400 invalid_request saying what is wrong. */
export function parsePageRanges(spec: string): PageRange[] {
  const { ranges, error } = parse(spec);
  if (error)
    throw invalidRequest(`pages: ${error}`, 'write pages as ranges like "1-5,9" (pages count from 1)');
  return ranges;
}

function parse(spec: string): { ranges: PageRange[]; error?: string } {
  if (typeof spec !== 'string' || spec.trim() === '') return { ranges: [], error: 'is empty' };
  if (spec.length > MAX_SPEC_LENGTH)
    return { ranges: [], error: `is longer than ${MAX_SPEC_LENGTH} characters` };
  const parts = spec.split(',');
  if (parts.length > MAX_PAGE_RANGES)
    return { ranges: [], error: `has ${parts.length} ranges; at most ${MAX_PAGE_RANGES} are allowed` };
  const ranges: PageRange[] = [];
  for (const raw of parts) {
    const part = raw.trim();
    const m = /^(\d+)(?:\s*(-)\s*(\d*))?$/.exec(part);
    if (!m) return { ranges: [], error: `"${part.slice(0, 40)}" is not a page number or a range like 3-7` };
    const first = Number(m[1]);
    const last = m[2] ? (m[3] ? Number(m[3]) : undefined) : first;
    if (first < 1) return { ranges: [], error: `"${part}": pages count from 1` };
    if (first > MAX_PAGE_NUMBER || (last !== undefined && last > MAX_PAGE_NUMBER))
      return { ranges: [], error: `"${part.slice(0, 40)}": page numbers go up to ${MAX_PAGE_NUMBER}` };
    if (last !== undefined && last < first)
      return { ranges: [], error: `"${part}": the range ends before it starts` };
    ranges.push({ first, last });
  }
  return { ranges };
}
