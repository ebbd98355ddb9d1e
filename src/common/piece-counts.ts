/**
 * Counts of the split's pieces already seen, each kind forgotten all at once when full. The
 * library's own cache of merges is off: it keeps its order by a delete and a set on every hit, and
 * once it held the pieces of some varied pages each hit rebuilt its table: after 100 pages of the
 * corpus a 16 KB page took 5.2-15.4 ms to count instead of 0.4-0.8, until the cache was cleared.
 *
 * Short pieces (words, spaces; nearly all of them) are found by their characters where they are in
 * the text, in a table of open addressing: a piece seen before is counted without a string made
 * of it (a Map of strings made one of each piece, and took half of a count's time). Longer ones,
 * up to a window of MAX_RUN (8 MB at most), are kept in a Map.
 */
const SHORT = 64;
/** Short pieces kept at most: half the table's slots, so that a probe ends soon. */
const SHORT_KEPT = 16_384;
const SLOTS = 2 * SHORT_KEPT;
const LONG_KEPT = 4096;

export class PieceCounts {
  private readonly keys: (string | undefined)[] = new Array<string | undefined>(SLOTS).fill(undefined);
  private readonly hashes = new Int32Array(SLOTS);
  private readonly counts = new Uint32Array(SLOTS);
  private shortKept = 0;
  private readonly long = new Map<string, number>();

  /** `count`: the library's tokens of one piece. */
  constructor(private readonly count: (piece: string) => number) {}

  /** The tokens of t.slice(p, e), one piece of the split. */
  at(t: string, p: number, e: number): number {
    const len = e - p;
    if (len > SHORT) return this.longAt(t.slice(p, e));
    const h = pieceHash(t, p, e);
    const mask = SLOTS - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const key = this.keys[s];
      if (key === undefined) return this.add(t.slice(p, e), h, s);
      if (this.hashes[s] === h && key.length === len && same(key, t, p)) return this.counts[s];
    }
  }

  private add(slice: string, h: number, slot: number): number {
    const piece = own(slice);
    const n = this.count(piece);
    if (this.shortKept >= SHORT_KEPT) {
      this.keys.fill(undefined);
      this.shortKept = 0;
      // The emptied table's slot for it is its first.
      slot = h & (SLOTS - 1);
    }
    this.keys[slot] = piece;
    this.hashes[slot] = h;
    this.counts[slot] = n;
    this.shortKept++;
    return n;
  }

  private longAt(slice: string): number {
    let n = this.long.get(slice);
    if (n === undefined) {
      const piece = own(slice);
      n = this.count(piece);
      if (this.long.size >= LONG_KEPT) this.long.clear();
      this.long.set(piece, n);
    }
    return n;
  }
}

/**
 * A piece kept as a string of its own: a slice of a text may point into the whole text, and one
 * new word kept from each page kept every page (3,000 pages of 8 KB held 22 MB after a collection).
 */
const own = (slice: string): string => JSON.parse(JSON.stringify(slice)) as string;

/** FNV-1a over the code units of t.slice(p, e), its length first. */
export function pieceHash(t: string, p: number, e: number): number {
  let h = 0x811c9dc5 ^ (e - p);
  for (let i = p; i < e; i++) h = Math.imul(h ^ t.charCodeAt(i), 0x01000193);
  return h;
}

/** Whether `key` is the text of `t` from p (of key's length). */
function same(key: string, t: string, p: number): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) !== t.charCodeAt(p + i)) return false;
  return true;
}
