import { spawn } from 'node:child_process';
import { joinLines, type Block } from './blocks';
import { ReadFailure } from './read-failure';

/** How a document asks for OCR: `auto` reads images and pages with no text layer; `always` every page; `never` none. */
export type OcrMode = 'auto' | 'always' | 'never';

/** What OCR may take: the languages (Tesseract's names, "eng+deu") and the CPU seconds of one image. */
export interface OcrLimits {
  langs: string;
  cpuS: number;
}

/** An image's pixels at most (about 40 megapixels: a 300 dpi A3 page is 17). */
export const MAX_PIXELS = 40_000_000;

export type ImageType = 'png' | 'jpeg' | 'webp' | 'tiff';

/** The image type by its first bytes, or undefined. */
export function imageTypeOf(b: Uint8Array): ImageType | undefined {
  const s = Buffer.from(b.buffer, b.byteOffset, Math.min(b.byteLength, 16));
  if (s.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (s[0] === 0xff && s[1] === 0xd8 && s[2] === 0xff) return 'jpeg';
  if (s.toString('latin1', 0, 4) === 'RIFF' && s.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  const t = s.toString('latin1', 0, 4);
  if (t === 'II*\0' || t === 'MM\0*') return 'tiff';
  return undefined;
}

/** Width and height from the image's header (its first frame, for a TIFF), or undefined. */
export function imageSize(b: Uint8Array, type: ImageType): { width: number; height: number } | undefined {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  try {
    if (type === 'png') return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
    if (type === 'jpeg') {
      for (let at = 2; at + 9 < buf.length;) {
        if (buf[at] !== 0xff) return undefined;
        const marker = buf[at + 1];
        // Start of frame: every SOFn but DHT (C4), JPG (C8) and DAC (CC).
        if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker))
          return { height: buf.readUInt16BE(at + 5), width: buf.readUInt16BE(at + 7) };
        at += 2 + buf.readUInt16BE(at + 2);
      }
      return undefined;
    }
    if (type === 'webp') {
      const chunk = buf.toString('latin1', 12, 16);
      if (chunk === 'VP8X') return { width: 1 + buf.readUIntLE(24, 3), height: 1 + buf.readUIntLE(27, 3) };
      if (chunk === 'VP8L') {
        const v = buf.readUInt32LE(21);
        return { width: 1 + (v & 0x3fff), height: 1 + ((v >> 14) & 0x3fff) };
      }
      if (chunk === 'VP8 ')
        return { width: buf.readUInt16LE(26) & 0x3fff, height: buf.readUInt16LE(28) & 0x3fff };
      return undefined;
    }
    const le = buf[0] === 0x49;
    const u16 = (o: number) => (le ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
    const u32 = (o: number) => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
    const ifd = u32(4);
    const size: { width?: number; height?: number } = {};
    for (let i = 0, n = u16(ifd); i < n && i < 500; i++) {
      const e = ifd + 2 + i * 12;
      const tag = u16(e);
      const value = u16(e + 2) === 3 ? u16(e + 8) : u32(e + 8);
      if (tag === 256) size.width = value;
      if (tag === 257) size.height = value;
    }
    return size.width && size.height ? { width: size.width, height: size.height } : undefined;
  } catch {
    return undefined;
  }
}

/** Refuses an image whose header states more than MAX_PIXELS, or states no size at all. */
export function checkPixels(b: Uint8Array, type: ImageType, what = 'the image'): void {
  const size = imageSize(b, type);
  if (!size) throw new ReadFailure('unreadable', `${what} (${type}) states no size`);
  if (size.width * size.height > MAX_PIXELS) {
    throw new ReadFailure(
      'too_large',
      `${what} is ${size.width}×${size.height} pixels, over the ${MAX_PIXELS} read by OCR`,
    );
  }
}

/**
 * An image's text by Tesseract (Debian's `tesseract`), as blocks per page: paragraphs where it
 * leaves a blank line, its pages (a TIFF's) where it puts a form feed. It runs under the parser's
 * own memory limit (inherited), killed with the parser (`setpriv --pdeathsig`), on one thread, and
 * within `cpuS` seconds of CPU (`prlimit --cpu`); the image comes on its standard input (PNG,
 * JPEG, WebP, TIFF, or a PGM this process wrote).
 */
export function ocr(image: Uint8Array, limits: OcrLimits): Promise<Block[][]> {
  return new Promise((resolve, reject) => {
    const args = [
      '--pdeathsig',
      'KILL',
      '--',
      'prlimit',
      `--cpu=${Math.max(1, Math.ceil(limits.cpuS))}`,
      '--',
    ];
    const p = spawn('setpriv', [...args, 'tesseract', 'stdin', 'stdout', '-l', limits.langs, '--psm', '3'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', OMP_THREAD_LIMIT: '1' },
    });
    const out: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-1000)));
    p.stdin.on('error', () => undefined); // a Tesseract that exits early stops reading
    p.on('error', (e) => reject(new ReadFailure('unreadable', `OCR could not start: ${e.message}`)));
    p.on('close', (code, signal) => {
      if (signal === 'SIGXCPU' || signal === 'SIGKILL')
        return reject(new ReadFailure('cpu', `OCR took over ${limits.cpuS} s of CPU time`));
      if (/failed to execute|No such file/i.test(err) && !/tessdata|traineddata/i.test(err))
        return reject(new ReadFailure('unreadable', "OCR needs Tesseract: install Debian's tesseract-ocr"));
      const lang = /Failed loading language '([^']{1,40})'/.exec(err)?.[1];
      if (code !== 0 && lang) {
        const msg = `OCR has no data for the language "${lang}" (SIFT_OCR_LANGS): install Debian's tesseract-ocr-${lang}`;
        return reject(new ReadFailure('unreadable', msg));
      }
      if (code !== 0) return reject(new ReadFailure('unreadable', `OCR failed: ${err.trim().slice(0, 300)}`));
      resolve(blocksOf(Buffer.concat(out).toString('utf8')));
    });
    p.stdin.end(Buffer.from(image.buffer, image.byteOffset, image.byteLength));
  });
}

/** Tesseract's text as blocks: a page per form feed, a paragraph per run of lines. */
function blocksOf(text: string): Block[][] {
  return text.split('\f').map((page) =>
    page
      .split(/\n\s*\n/)
      .map((para) =>
        joinLines(
          para
            .split('\n')
            .map((l) => l.trim())
            .filter(Boolean),
        ),
      )
      .filter((t) => t !== '')
      .map((t) => ({ kind: 'paragraph', text: t }) as Block),
  );
}

/** A grey image (8 bits a pixel) as a PGM file, which Tesseract reads. */
export function pgm(width: number, height: number, grey: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`P5\n${width} ${height}\n255\n`, 'latin1'), grey]);
}
