import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { constants } from 'node:buffer';
import { FORMATS, renderFormat, textsOf, unwrittenOf, type Written } from './formats';
import { ReadFailure } from './read-failure';

/**
 * A large document on its way to its parser process, and large formats on their way back. Through
 * the IPC channel a message is serialized (copied), sent in 64 KB reads, put together and read
 * again: a 1.7 MB reply (three formats of an odt, 290,000 characters each) cost both processes
 * about 6 ms of CPU, a fifth of the reading, and a 275 KB deck sent cost sift 0.6–0.9 ms, as much
 * as a third of reading it. Either is written instead, as it is in memory, to a file the two
 * processes share, and read by the other in one call. The parent makes the file (in memory, under
 * /dev/shm, where there is one) and removes its name at once: it lives as long as either process
 * holds it, and nothing is left behind, however either ends. One document at a time: the parent
 * writes a job only to an empty file, and the child empties it once the job is read; the parent
 * empties it once the formats are read.
 */

export type Encoding = 'latin1' | 'utf16le';
/** Each format's encoding and bytes, in the file one after the other (markdown, text, html). */
export type Parts = [Encoding, number][];

/** Formats under this many characters together go by the channel: the file costs calls of its own. */
const FILE_CHARS = 64 * 1024;
/** A document under this many bytes goes by the channel, for the same reason. */
const FILE_BYTES = 64 * 1024;
/** Pieces of a format are joined to about this many characters to be written: a string V8 keeps among its small ones. */
const CHUNK_CHARS = 32 * 1024;

/** The parent's side: a new file's descriptor, or undefined where none can be made. */
export function openSharedFile(dirs = ['/dev/shm', os.tmpdir()]): number | undefined {
  for (const dir of dirs) {
    const file = path.join(dir, `sift-shared-${crypto.randomUUID()}`);
    let fd: number | undefined;
    try {
      fd = fs.openSync(file, 'wx+', 0o600);
      fs.unlinkSync(file);
      return fd;
    } catch {
      if (fd === undefined) continue;
      fs.closeSync(fd);
      fs.rmSync(file, { force: true });
    }
  }
  return undefined;
}

/**
 * The child's side: the file it was given (as descriptor `inherited`), opened again to be closed
 * as the child starts another program (Tesseract, on a hostile image), and the inherited one
 * closed; undefined when there is none, or no /proc to open it by.
 */
export function takeSharedFile(inherited: string | undefined): number | undefined {
  if (!inherited || !/^\d+$/.test(inherited)) return undefined;
  const fd = Number(inherited);
  try {
    return fs.openSync(`/proc/self/fd/${fd}`, 'r+');
  } catch {
    return undefined;
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // not open
    }
  }
}

/**
 * The parent's side: writes a document's bytes to the (empty) file; false when they go by the
 * channel (small, no file, or a file that could not take them all: it is emptied again).
 */
export function writeJob(fd: number | undefined, bytes: Uint8Array): boolean {
  if (fd === undefined || bytes.byteLength < FILE_BYTES) return false;
  try {
    for (let at = 0; at < bytes.byteLength;) {
      const n = fs.writeSync(fd, bytes, at, bytes.byteLength - at, at);
      if (n <= 0) throw new Error('short');
      at += n;
    }
    return true;
  } catch {
    // a full folder, say: emptied, and the channel carries the document
  }
  empty(fd);
  return false;
}

/**
 * The child's side: the document's `size` bytes the parent wrote, read from the file, which is
 * emptied after. Throws ReadFailure: `memory` when this process cannot hold them, `unreadable`
 * when the file does not hold them (the parent said what it wrote).
 */
export function readJob(fd: number | undefined, size: unknown): Uint8Array {
  if (fd === undefined || !Number.isSafeInteger(size) || (size as number) < 0)
    throw new ReadFailure('unreadable', 'the document was not passed to its parser');
  let b: Buffer;
  try {
    b = Buffer.allocUnsafe(size as number);
  } catch {
    throw new ReadFailure('memory', 'the document is larger than its parser may hold');
  }
  try {
    for (let got = 0; got < b.length;) {
      const n = fs.readSync(fd, b, got, b.length - got, got);
      if (n === 0) throw new Error('short');
      got += n;
    }
  } catch {
    throw new ReadFailure('unreadable', 'the document was not passed to its parser whole');
  } finally {
    empty(fd);
  }
  return b;
}

/** Empties the file, its memory given back. */
function empty(fd: number): void {
  try {
    fs.ftruncateSync(fd, 0);
  } catch {
    // not a file this process can write to
  }
}

/**
 * The child's side: writes a document's formats to the file and says where they are; undefined
 * when they go by the channel (small, no file, or a file that could not take them all). Formats
 * not written yet (formats.ts) are written from their pages straight to the file, a few pieces
 * joined at a time: never one string of a format, which would be new memory (see writeFormats).
 */
export function writeFormats(fd: number | undefined, doc: Written): Parts | undefined {
  const unwritten = unwrittenOf(doc);
  const texts = unwritten ? undefined : [doc.markdown, doc.text, doc.html];
  const { chars, wide } = unwritten
    ? textsOf(unwritten.pages)
    : { chars: texts!.reduce((n, t) => n + t.length, 0) / 3, wide: undefined };
  // Each format holds the text at least once: three times the text is what the channel would carry.
  if (fd === undefined || chars * 3 < FILE_CHARS) return undefined;
  try {
    const parts: Parts = [];
    let at = 0;
    for (const [i, format] of FORMATS.entries()) {
      // As V8 holds it: one byte a character, or two (the formats add only ASCII to the text).
      const enc: Encoding = (wide ?? /[\u0100-\uffff]/.test(texts![i])) ? 'utf16le' : 'latin1';
      const out = new FileSink(fd, at, enc);
      if (texts) out.write(texts[i], true);
      else renderFormat(format, unwritten!.pages, unwritten!.marker, (x) => out.add(x));
      out.flush();
      parts.push([enc, out.bytes]);
      at += out.bytes;
    }
    return parts;
  } catch {
    // a full folder, say: the channel carries the reply
  }
  // What was written is given back.
  empty(fd);
  return undefined;
}

/** A format written to the file from `at`, its pieces joined CHUNK_CHARS or so at a time. */
class FileSink {
  bytes = 0;
  private pending: string[] = [];
  private chars = 0;

  constructor(
    private readonly fd: number,
    private readonly at: number,
    private readonly enc: Encoding,
  ) {}

  add(piece: string): void {
    this.pending.push(piece);
    this.chars += piece.length;
    if (this.chars >= CHUNK_CHARS) this.flush();
  }

  flush(): void {
    if (this.pending.length === 0) return;
    this.write(this.pending.join(''));
    this.pending = [];
    this.chars = 0;
  }

  /**
   * Throws when the file takes less than all of it (a full folder, a size limit), or when one
   * byte a character would not hold it (`known`: it was looked at): the channel carries it then.
   */
  write(s: string, known = false): void {
    if (!known && this.enc === 'latin1' && /[\u0100-\uffff]/.test(s)) throw new Error('wide');
    const n = fs.writeSync(this.fd, s, this.at + this.bytes, this.enc);
    if (n !== Buffer.byteLength(s, this.enc)) throw new Error('short');
    this.bytes += n;
  }
}

/**
 * Formats are read into this buffer, kept between documents (and shared by every process: each
 * reply is read and decoded at once): a new one each time is new memory, which the kernel maps page
 * by page as it is filled, 4.8 ms for 1.7 MB on the virtual machines sift was measured on.
 */
let scratch = Buffer.alloc(0);
/** Replies up to this size are read into it; a larger one into a buffer of its own. */
const KEEP_BYTES = 4 * 1024 * 1024;

function bufferOf(bytes: number): Buffer {
  if (bytes > KEEP_BYTES) return Buffer.allocUnsafe(bytes);
  if (scratch.length < bytes)
    scratch = Buffer.allocUnsafe(Math.min(KEEP_BYTES, Math.max(bytes, 2 * scratch.length)));
  return scratch;
}

/**
 * The parent's side: the formats the parts say, read from the file, which is emptied after (its
 * memory given back); undefined when the parts are not what a child writes, more than `maxBytes`
 * (what the child's memory can hold) or more than the file holds.
 */
export function readFormats(fd: number, parts: unknown, maxBytes: number): Written | undefined {
  if (!Array.isArray(parts) || parts.length !== 3) return undefined;
  let total = 0;
  for (const p of parts as unknown[]) {
    if (!Array.isArray(p) || (p[0] !== 'latin1' && p[0] !== 'utf16le')) return undefined;
    const n: unknown = p[1];
    const wide = p[0] === 'utf16le';
    if (!Number.isSafeInteger(n) || (n as number) < 0 || (wide && (n as number) % 2 !== 0)) return undefined;
    if ((n as number) / (wide ? 2 : 1) > constants.MAX_STRING_LENGTH) return undefined;
    total += n as number;
  }
  try {
    if (total > maxBytes || total > fs.fstatSync(fd).size) return undefined;
    const b = bufferOf(total);
    // One read returns 2 GB at most.
    for (let got = 0; got < total;) {
      const n = fs.readSync(fd, b, got, total - got, got);
      if (n === 0) return undefined;
      got += n;
    }
    fs.ftruncateSync(fd, 0);
    let at = 0;
    const [markdown, text, html] = (parts as Parts).map(([enc, n]) => b.toString(enc, at, (at += n)));
    return { markdown, text, html };
  } catch {
    return undefined;
  }
}
