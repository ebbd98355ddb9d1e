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
  return targets.map((t, idx) => {
    if (t.failed) return t;
    const key = `${normalUrl(t.url)}\n${canonicalJson(JSON.parse(t.options))}`;
    const earlier = first.get(key);
    if (earlier === undefined) {
      first.set(key, idx);
      return t;
    }
    return { ...t, dupOf: earlier };
  });
}
