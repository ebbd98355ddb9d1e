import type { Link } from '../extract/links';

/** A link's share of an answer: its bytes as the envelope writes it, `{"url":…,"text":…}` and a comma. */
export function linkBytes(l: Link): number {
  return Buffer.byteLength(JSON.stringify(l)) + 1;
}

/**
 * The links inside a byte budget: the content comes first, the links fill what it leaves of the
 * cap, in document order, up to the first that does not fit. `cut`: some were left out.
 */
export function linksWithin(links: Link[], budget: number): { links: Link[]; cut: boolean } {
  let left = budget;
  for (let i = 0; i < links.length; i++) {
    left -= linkBytes(links[i]);
    if (left < 0) return { links: links.slice(0, i), cut: true };
  }
  return { links, cut: false };
}
