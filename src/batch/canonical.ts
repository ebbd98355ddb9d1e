import { createHash, type Hash } from 'node:crypto';
import type { TimeSlicer } from '../common/time-slice';

/** JSON with object keys sorted at every level, so equal bodies give equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export function fingerprintOf(v: unknown): string {
  return createHash('sha256').update(canonicalJson(v)).digest('hex');
}

/**
 * Writes canonicalJson's text into `hash` a list item at a time, with turns of the event loop
 * between slices: a batch's 10,000 targets made one string (31 MB with long URLs) hashed in one
 * call, which held the loop for hundreds of milliseconds. The bytes hashed are the same.
 */
async function hashCanonical(v: unknown, hash: Hash, slicer: TimeSlicer): Promise<void> {
  if (Array.isArray(v)) {
    hash.update('[');
    for (let i = 0; i < v.length; i++) {
      // An item canonicalJson writes as undefined (a function) joins as nothing, as there.
      hash.update(`${i > 0 ? ',' : ''}${canonicalJson(v[i]) ?? ''}`);
      if (slicer.due()) await slicer.turn();
    }
    hash.update(']');
  } else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    hash.update('{');
    for (const [i, k] of keys.entries()) {
      hash.update(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`);
      await hashCanonical(o[k], hash, slicer);
    }
    hash.update('}');
  } else {
    hash.update(`${JSON.stringify(v)}`);
  }
}

/** fingerprintOf, the same digest, its text hashed as it is made (see hashCanonical). */
export async function fingerprintInSlices(v: unknown, slicer: TimeSlicer): Promise<string> {
  const hash = createHash('sha256');
  await hashCanonical(v, hash, slicer);
  return hash.digest('hex');
}
