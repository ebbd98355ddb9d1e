import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type { TimeSlicer } from '../common/time-slice';
import { MAX_SITEMAP_URL } from './sitemap-limits';
import { SitemapXml, couldBeUrl, type Found } from './sitemap-xml';

/** Bytes read at a time, inflated or plain: decoded and tokenized in well under a slice. */
const CHUNK_BYTES = 64 * 1024;
/** A file is XML when its first character but white space is `<` and comes this early. */
const SNIFF_CHARS = 4096;

export interface BodyRead {
  /** Bytes read, after gunzip. */
  bytes: number;
  /** Reading stopped at `room` bytes with more left, or the body was cut before it came. */
  cut: boolean;
  /** The gzip stream broke; what came before the fault was read. */
  failed: boolean;
  /** `full` when `take` wanted no more, `aborted` when the signal came. */
  outcome: 'done' | 'full' | 'aborted';
}

export interface BodyReadOptions {
  /** Bytes that may be read, after gunzip. */
  room: number;
  /** The body was cut by the byte budget: a last line without its newline may be partial. */
  cut: boolean;
  /** Takes one `<loc>` or line; false once no more entries are wanted. */
  take: (found: Found) => boolean;
  slicer: TimeSlicer;
  signal?: AbortSignal;
}

/**
 * One sitemap file's body read as a stream: inflated when it starts with gzip's magic bytes
 * (whatever its name or type), at most `room` bytes of it (the rest of a bomb is never inflated),
 * decoded as UTF-8 and read as XML or as one URL per line, a chunk at a time. Never more than a
 * chunk, the tokenizer's bounded window and the URLs found in the chunk are held besides the
 * compressed body; the event loop gets a turn whenever `slicer` says so, between chunks and
 * between the URLs a chunk held, so neither the inflate nor the parse nor `take` holds it.
 */
export async function readSitemapBody(body: Buffer, o: BodyReadOptions): Promise<BodyRead> {
  const found: Found[] = [];
  const text = new BodyText(found);
  const decoder = new StringDecoder('utf8');
  const read: BodyRead = { bytes: 0, cut: o.cut, failed: false, outcome: 'done' };
  const drain = async (): Promise<BodyRead['outcome']> => {
    for (let i = 0; i < found.length;) {
      if (!o.take(found[i++])) return 'full';
      if (!o.slicer.due()) continue;
      // What was taken is let go before the turn, so it dies young instead of being promoted.
      found.splice(0, i);
      i = 0;
      await o.slicer.turn();
      if (o.signal?.aborted) return 'aborted';
    }
    found.length = 0;
    return 'done';
  };
  try {
    for await (const chunk of isGzip(body) ? inflated(body) : chunks(body)) {
      const room = o.room - read.bytes;
      read.bytes += Math.min(chunk.length, room);
      text.write(decoder.write(chunk.length > room ? chunk.subarray(0, room) : chunk));
      read.outcome = await drain();
      if (read.outcome !== 'done') return read;
      if (chunk.length > room) {
        read.cut = true;
        break;
      }
      if (o.slicer.due()) await o.slicer.turn();
      if (o.signal?.aborted) return { ...read, outcome: 'aborted' };
    }
  } catch {
    read.failed = true;
  }
  text.write(decoder.end());
  text.end(read.cut || read.failed);
  read.outcome = await drain();
  return read;
}

function isGzip(body: Buffer): boolean {
  return body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b;
}

/** The body inflated, a chunk at a time as it is read (zlib inflates off the main thread). */
function inflated(body: Buffer): AsyncIterable<Buffer> {
  const gunzip = createGunzip({ chunkSize: CHUNK_BYTES });
  gunzip.end(body);
  return gunzip;
}

async function* chunks(body: Buffer): AsyncIterable<Buffer> {
  for (let at = 0; at < body.length; at += CHUNK_BYTES) yield body.subarray(at, at + CHUNK_BYTES);
}

/** Text that is XML or lines, told apart by its start; each `<loc>` or line goes to `found`. */
class BodyText {
  private head = '';
  private reader?: SitemapXml | SitemapLines;

  constructor(private readonly found: Found[]) {}

  write(text: string): void {
    if (this.reader) return this.reader.write(text);
    this.head += text;
    const first = this.head.search(/\S/);
    if (first < 0 && this.head.length < SNIFF_CHARS) return;
    this.start(first >= 0 && first < SNIFF_CHARS && this.head[first] === '<');
  }

  end(cut: boolean): void {
    if (!this.reader) this.start(false);
    if (this.reader instanceof SitemapLines) this.reader.end(cut);
  }

  private start(xml: boolean): void {
    this.reader = xml ? new SitemapXml(this.found) : new SitemapLines(this.found);
    this.reader.write(this.head);
    this.head = '';
  }
}

/** A plain-text sitemap: one URL per line; a line too long for a URL is passed over, not kept. */
class SitemapLines {
  private line = '';
  private long = false;

  constructor(private readonly found: Found[]) {}

  write(text: string): void {
    for (let at = 0; ;) {
      const nl = text.indexOf('\n', at);
      this.add(text.slice(at, nl < 0 ? text.length : nl));
      if (nl < 0) return;
      this.close();
      at = nl + 1;
    }
  }

  /** The file ended; a cut file's last line may be partial, so it is not read. */
  end(cut: boolean): void {
    if (!cut) this.close();
  }

  private add(part: string): void {
    if (this.long) return;
    this.line += part;
    if (this.line.length > MAX_SITEMAP_URL + 64) {
      this.long = true;
      this.line = '';
    }
  }

  private close(): void {
    const url = this.line.trim();
    if (!this.long && couldBeUrl(url)) this.found.push({ kind: 'entry', url });
    this.line = '';
    this.long = false;
  }
}
