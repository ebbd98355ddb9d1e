import type { TimeSlicer } from '../common/time-slice';
import { canonicalJson } from './canonical';

/** A URL as the cache keys it: no fragment, no credentials. */
function normalUrl(url: string): string {
  const u = new URL(url);
  u.hash = '';
  u.username = u.password = '';
  return u.href;
}

/**
 * Marks each target whose normalised URL and options equal an earlier one's with `dupOf`, that
 * earlier target's position: it is not fetched, it gets that one's result. Targets already failed
 * (an invalid URL) are left as they are.
 */
export function markDuplicates<T extends { url: string; options: string; failed?: unknown }>(
  targets: T[],
): (T & { dupOf?: number })[] {
  const first = new Map<string, number>();
  return targets.map((t, idx) => marked(first, t, idx));
}

/**
 * markDuplicates, a slice at a time: a URL parsed and options read again per target held the
 * event loop for tens of milliseconds over a batch's 10,000.
 */
export async function markDuplicatesInSlices<T extends { url: string; options: string; failed?: unknown }>(
  targets: T[],
  slicer: TimeSlicer,
): Promise<(T & { dupOf?: number })[]> {
  const first = new Map<string, number>();
  const out = new Array<T & { dupOf?: number }>(targets.length);
  for (let idx = 0; idx < targets.length; idx++) {
    out[idx] = marked(first, targets[idx], idx);
    if (slicer.due()) await slicer.turn();
  }
  return out;
}

/** The target, with `dupOf` when `first` has an earlier one like it; otherwise noted there. */
function marked<T extends { url: string; options: string; failed?: unknown }>(
  first: Map<string, number>,
  t: T,
  idx: number,
): T & { dupOf?: number } {
  if (t.failed) return t;
  const key = `${normalUrl(t.url)}\n${canonicalJson(JSON.parse(t.options))}`;
  const earlier = first.get(key);
  if (earlier === undefined) {
    first.set(key, idx);
    return t;
  }
  return { ...t, dupOf: earlier };
}
