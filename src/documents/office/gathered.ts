import { blockChars, type Block } from '../blocks';

/** A document's blocks as they are read, up to its character cap; past it, the rest is cut. */
export class Gathered {
  blocks: Block[] = [];
  truncated = false;
  private chars = 0;
  /** Blocks of a page left out (by the `pages` option) are passed over: neither kept nor counted. */
  skipping = false;

  constructor(private readonly maxChars: number) {}

  /** Keeps the block if it fits, else marks the document cut; whether it was kept. */
  add(b: Block): boolean {
    if (this.truncated) return false;
    if (this.skipping) return true;
    const n = blockChars(b);
    if (this.chars + n > this.maxChars) {
      this.truncated = true;
      return false;
    }
    this.chars += n;
    this.blocks.push(b);
    return true;
  }

  /** The blocks gathered since the last call (a sheet's, a slide's). */
  take(): Block[] {
    const b = this.blocks;
    this.blocks = [];
    return b;
  }
}
