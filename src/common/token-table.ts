/**
 * A text's tokens at some of the offsets where the library's pieces begin (tokenTable's: each line's
 * start, and the text's end), with the tokens before each. A part of the text between two of them
 * is read alone in the same pieces (the split looks ahead only at the end of a run of spaces, and a
 * piece that ends at an offset ends there whatever follows), so its tokens are a difference, with
 * no count made again. Offsets after the second piece of a run of spaces, or inside an over-long
 * run (counted in windows), are left out.
 */
export class TokenTable {
  constructor(
    readonly text: string,
    private readonly starts: readonly number[],
    private readonly before: readonly number[],
  ) {}

  get tokens(): number {
    return this.before[this.before.length - 1];
  }

  /** The tokens of text.slice(from, to), or undefined when either is not an offset of the table. */
  between(from: number, to: number): number | undefined {
    const i = this.find(from);
    const j = i < 0 ? -1 : this.find(to);
    return j < 0 ? undefined : this.before[j] - this.before[i];
  }

  private find(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.starts[mid];
      if (v === offset) return mid;
      if (v < offset) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}
