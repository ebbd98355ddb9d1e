import * as zlib from 'node:zlib';
import { ReadFailure } from '../read-failure';

/** One file of the archive, as its central directory lists it. */
interface Entry {
  name: string;
  method: number;
  flags: number;
  compressed: number;
  size: number;
  offset: number;
}

/** What one archive may cost to open: the parts read, whole and each. */
export interface ZipLimits {
  /** Bytes one part may inflate to. */
  partBytes: number;
  /** Bytes every part read may inflate to, together. */
  totalBytes: number;
}

/**
 * A part that claims to grow more than this many times its compressed size is a bomb, not XML
 * (deflate's limit is about 1,032; a 100,000-row sheet's parts grow 8 to 10 times).
 */
const MAX_RATIO = 500;
/** Entries listed at most: an Office file has tens, an e-book hundreds. */
const MAX_ENTRIES = 10_000;

const tooLarge = (why: string) => new ReadFailure('too_large', why);
const damaged = (why: string) => new ReadFailure('unreadable', `the zip archive is damaged: ${why}`);

/**
 * The parts of a zip archive (an Office, OpenDocument or EPUB file), read only when asked and
 * bounded before and while inflating: a part's stated size, its ratio, and what it really
 * inflates to (zlib stops at the cap), each part and all of them together. Node's zlib does the
 * inflating; the directory is read here, where every length is checked against the file.
 */
export class Zip {
  private readonly entries = new Map<string, Entry>();
  private inflated = 0;

  constructor(
    private readonly bytes: Buffer,
    private readonly limits: ZipLimits,
  ) {
    const end = findEnd(bytes);
    const count = bytes.readUInt16LE(end + 10);
    const size = bytes.readUInt32LE(end + 12);
    const start = bytes.readUInt32LE(end + 16);
    if (count === 0xffff || start === 0xffffffff) throw damaged('zip64 archives are not read');
    if (count > MAX_ENTRIES) throw tooLarge(`the archive lists ${count} files, over ${MAX_ENTRIES}`);
    if (start + size > end) throw damaged('its directory lies outside the file');
    let at = start;
    for (let i = 0; i < count; i++) {
      if (at + 46 > end || bytes.readUInt32LE(at) !== 0x02014b50) throw damaged('a directory entry is cut');
      const nameLength = bytes.readUInt16LE(at + 28);
      const next = at + 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
      if (next > end) throw damaged('a directory entry runs past the directory');
      const name = bytes.toString('utf8', at + 46, at + 46 + nameLength);
      this.entries.set(name, {
        name,
        flags: bytes.readUInt16LE(at + 8),
        method: bytes.readUInt16LE(at + 10),
        compressed: bytes.readUInt32LE(at + 20),
        size: bytes.readUInt32LE(at + 24),
        offset: bytes.readUInt32LE(at + 42),
      });
      at = next;
    }
  }

  /** Whether bytes begin as a zip archive does. */
  static starts(bytes: Uint8Array): boolean {
    return bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** A part's bytes, or undefined when the archive has no such part. */
  read(name: string): Buffer | undefined {
    const e = this.entries.get(name);
    if (!e) return undefined;
    if (e.flags & 1) throw new ReadFailure('encrypted', `${name} is encrypted`);
    const left = Math.min(this.limits.partBytes, this.limits.totalBytes - this.inflated);
    if (e.size > left) throw tooLarge(`${name} would inflate to ${e.size} bytes, over ${left}`);
    if (e.size > MAX_RATIO * Math.max(e.compressed, 1024))
      throw tooLarge(`${name} claims to inflate ${Math.round(e.size / Math.max(e.compressed, 1))} times`);
    const b = this.bytes;
    if (e.offset + 30 > b.length || b.readUInt32LE(e.offset) !== 0x04034b50)
      throw damaged(`${name} is not where the directory says`);
    const from = e.offset + 30 + b.readUInt16LE(e.offset + 26) + b.readUInt16LE(e.offset + 28);
    if (from + e.compressed > b.length) throw damaged(`${name} runs past the end of the file`);
    const data = b.subarray(from, from + e.compressed);
    let out: Buffer;
    if (e.method === 0) {
      // Stored: its bytes are its size, which the checks above held to the limits.
      if (e.compressed !== e.size)
        throw damaged(`${name} is stored in ${e.compressed} bytes but states ${e.size}`);
      out = data;
    } else if (e.method === 8) {
      try {
        // The cap is what the directory states, or less: a part that lies about its size stops there.
        out = zlib.inflateRawSync(data, { maxOutputLength: Math.max(e.size, 1) });
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(`${name} inflates past the size it states`);
        throw damaged(`${name}: ${(err as Error).message}`);
      }
    } else throw damaged(`${name} is compressed by method ${e.method}, which is not read`);
    this.inflated += out.length;
    return out;
  }
}

/** The end-of-directory record: searched from the end, past a comment of up to 65,535 bytes. */
function findEnd(b: Buffer): number {
  for (let at = b.length - 22; at >= Math.max(0, b.length - 22 - 65_535); at--) {
    if (b.readUInt32LE(at) === 0x06054b50) return at;
  }
  throw damaged('it has no directory');
}
