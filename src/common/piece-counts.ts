/**
 * Counts of the split's pieces already seen, each kind forgotten all at once when full. The
 * library's own cache of merges is off: it keeps its order by a delete and a set on every hit, and
 * once it held the pieces of some varied pages each hit rebuilt its table: after 100 pages of the
 * corpus a 16 KB page took 5.2-15.4 ms to count instead of 0.4-0.8, until the cache was cleared.
 *
 * Short pieces (words, spaces; nearly all of them) are found by their characters where they are in
 * the text, in tables of open addressing: a piece seen before is counted without a string made of
 * it (a Map of strings made one of each piece, and took half of a count's time). A piece of up to
 * PACKED characters of ASCII (most words of English and of markdown's syntax) is kept as three
 * numbers that hold its characters, seven bits each, and its length: found by comparing them.
 * Other short pieces are kept as strings. Longer ones, up to a window of MAX_RUN (8 MB at most),
 * are kept in a Map.
 */
const PACKED = 12;
const SHORT = 64;
/** Short pieces kept at most: half the table's slots, so that a probe ends soon. */
const SHORT_KEPT = 16_384;
const SLOTS = 2 * SHORT_KEPT;
const LONG_KEPT = 4096;

export class PieceCounts {
  /** Four numbers a slot: the packed piece (three; 0 in the first for none) and its count. */
  private readonly packed = new Int32Array(4 * SLOTS);
  private packedKept = 0;
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
    if (len <= PACKED) {
      const n = this.packedAt(t, p, e);
      if (n >= 0) return n;
    }
    if (len > SHORT) return this.longAt(t.slice(p, e));
    const h = pieceHash(t, p, e);
    const mask = SLOTS - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const key = this.keys[s];
      if (key === undefined) return this.add(t.slice(p, e), h, s);
      if (this.hashes[s] === h && key.length === len && same(key, t, p)) return this.counts[s];
    }
  }

  /** The count of a piece of ASCII of up to PACKED characters, or -1 for another. */
  private packedAt(t: string, p: number, e: number): number {
    // Its length (1 to 12) in the first number's top bits: no piece packs to 0 there.
    let w0 = (e - p) << 28;
    let w1 = 0;
    let w2 = 0;
    for (let i = p; i < e; i++) {
      const c = t.charCodeAt(i);
      if (c >= 128) return -1;
      const k = i - p;
      const at = (k & 3) * 7;
      if (k < 4) w0 |= c << at;
      else if (k < 8) w1 |= c << at;
      else w2 |= c << at;
    }
    let h = Math.imul(w0 ^ Math.imul(w1, 0x9e3779b1) ^ Math.imul(w2, 0x85ebca77), 0xc2b2ae3d);
    h ^= h >>> 15;
    const slots = this.packed;
    const mask = SLOTS - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const o = s << 2;
      const k0 = slots[o];
      if (k0 === 0) {
        const n = this.count(t.slice(p, e));
        if (this.packedKept >= SHORT_KEPT) {
          slots.fill(0);
          this.packedKept = 0;
          return this.putPacked(h & mask, w0, w1, w2, n);
        }
        return this.putPacked(s, w0, w1, w2, n);
      }
      if (k0 === w0 && slots[o + 1] === w1 && slots[o + 2] === w2) return slots[o + 3];
    }
  }

  private putPacked(s: number, w0: number, w1: number, w2: number, n: number): number {
    const o = s << 2;
    this.packed[o] = w0;
    this.packed[o + 1] = w1;
    this.packed[o + 2] = w2;
    this.packed[o + 3] = n;
    this.packedKept++;
    return n;
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
