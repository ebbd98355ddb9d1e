import { createRequire } from 'node:module';
import * as path from 'node:path';
import { mayBeOffice, readCsvFile, readOffice, readRtfFile, startsAsRtf } from './office/office-reader';
import { imageTypeOf } from './ocr';
import { keepBuiltins } from './builtins';
import { deferFormats, withoutFormats } from './formats';
import { readJob, takeSharedFile, writeFormats, type Parts } from './shared-file';

/** Whether bytes begin as a PDF does. */
const startsAsPdf = (b: Uint8Array): boolean =>
  Buffer.from(b.buffer, b.byteOffset, Math.min(5, b.byteLength)).toString('latin1') === '%PDF-';
import { readImage } from './image-reader';
import { Exhaustion, readDocument, ReadFailure, type ParsedDocument, type ReadJob } from './pdf-reader';

/**
 * The parser's process: reads one document at a time for its parent, over the IPC channel.
 * Parent → child: `{id, job}`, or `{id, job, size}` with the document's `size` bytes in the shared
 * file (shared-file.ts) and none in the job. Child → parent: `{ready}` once pdf.js is loaded, `{id, progress: n}`
 * as page n starts (0: opening), then `{id, ok}` or `{id, fail, message}`.
 */
export type ChildReply =
  | { ready: true }
  | { id: number; progress: number }
  | { id: number; ok: ParsedDocument; parts?: Parts }
  | { id: number; fail: ReadFailure['kind']; message: string };

type PdfJs = typeof import('pdfjs-dist');

/** Puts back the engine's functions pdf.js's polyfills replace as it loads (see keepBuiltins). */
let restoreBuiltins: (() => number) | undefined;

/**
 * Before pdf.js loads. It notes the engine's own functions, to be put back once pdf.js has loaded
 * (serve). It fills in DOMMatrix, ImageData and Path2D from the optional canvas package, for
 * rendering, which is never done here: loading that native module reserves about 1 GB
 * of address space counted by the data-segment limit, so that a child under 256 MB could not start.
 * An empty module stands in its place in the require cache (documented: entries may be added),
 * and DOMMatrix, the one pdf.js makes at load, is a plain identity matrix.
 */
export function prepare(pdfjsRoot: string): void {
  restoreBuiltins = keepBuiltins();
  const g = globalThis as Record<string, unknown>;
  g.DOMMatrix ??= class DOMMatrix {
    a = 1;
    b = 0;
    c = 0;
    d = 1;
    e = 0;
    f = 0;
  };
  g.ImageData ??= class ImageData {};
  g.Path2D ??= class Path2D {};
  try {
    const filename = createRequire(path.join(pdfjsRoot, 'package.json')).resolve('@napi-rs/canvas');
    require.cache[filename] = { id: filename, filename, loaded: true, exports: {} } as NodeJS.Module;
  } catch {
    // the optional package is not installed: pdf.js warns and goes on
  }
}

/** Serves documents until the parent goes; pdf.js's worker runs in this thread. */
export function serve(pdfjs: PdfJs, worker: unknown, pdfjsRoot: string): void {
  restoreBuiltins?.();
  deferFormats();
  (globalThis as Record<string, unknown>).pdfjsWorker = worker;
  let exhaustion = new Exhaustion();
  // pdf.js logs with console.log; nothing else here writes to the console.
  const watch = (...args: unknown[]) => exhaustion.watch(args.map(String).join(' '));
  console.log = watch;
  console.warn = watch;
  console.error = watch;
  const send = (m: ChildReply) => process.send?.(m);
  const sharedFd = takeSharedFile(process.env.SIFT_SHARED_FD);
  process.on('disconnect', () => process.exit(0));
  process.on('message', (m: { id: number; job: ReadJob; size?: number }) => {
    exhaustion = new Exhaustion();
    const progress = (n: number) => send({ id: m.id, progress: n });
    const read = async () => {
      // A view of the bytes as they arrived (a Buffer or a Uint8Array), not a copy.
      const b = 'size' in m ? readJob(sharedFd, m.size) : m.job.bytes;
      const job = { ...m.job, bytes: new Uint8Array(b.buffer, b.byteOffset, b.byteLength) };
      return readAny(pdfjs, pdfjsRoot, job, exhaustion, progress);
    };
    read().then(
      (ok) => {
        // A large document's formats by the shared file, its metadata by the channel.
        const parts = writeFormats(sharedFd, ok);
        send(parts ? { id: m.id, ok: withoutFormats(ok), parts } : { id: m.id, ok });
      },
      (err: unknown) => {
        const f = err instanceof ReadFailure ? err : new ReadFailure('unreadable', String(err));
        send({ id: m.id, fail: f.kind, message: f.message });
      },
    );
  });
  send({ ready: true });
}

/** A PDF by pdf.js; a zip archive as an Office file (read whole while "opening" it); an image by OCR. */
async function readAny(
  pdfjs: PdfJs,
  pdfjsRoot: string,
  job: ReadJob,
  exhaustion: Exhaustion,
  progress: (page: number) => void,
): Promise<ParsedDocument> {
  // By the bytes first: a PDF, an archive or an image is one whatever it was served as; a CSV
  // by its type alone.
  const image = imageTypeOf(job.bytes);
  const other = image || mayBeOffice(job.bytes) || startsAsRtf(job.bytes) || job.mediaType === 'text/csv';
  if (startsAsPdf(job.bytes) || !other) return readDocument(pdfjs, pdfjsRoot, job, exhaustion, progress);
  // Read whole as it is opened: the parent's timer for opening (page 0) runs from the job's start.
  if (image) return readImage(job, image);
  if (mayBeOffice(job.bytes)) return readOffice(job.bytes, job.maxChars, job.ranges);
  if (startsAsRtf(job.bytes)) return readRtfFile(job.bytes, job.maxChars);
  return readCsvFile(job.bytes, job.maxChars);
}
