import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { SiftError, fileTooLarge, invalidRequest } from '../common/errors';

/** A file sent to be read: its bytes, the type it was sent as, and its name when it had one. */
export interface Upload {
  bytes: Buffer;
  contentType: string;
  name?: string;
}

/** What a file route's body holds once read: the file, and the `options` JSON object if sent. */
export interface FileBody {
  upload: Upload;
  options?: unknown;
}

/** The `options` part (a JSON object) at most. */
const OPTIONS_BYTES = 64 * 1024;

const noFile = () =>
  invalidRequest(
    'no file was sent',
    'send the file as the body with its Content-Type, or as the part "file" of multipart/form-data',
  );

const badOptions = (why: string) =>
  invalidRequest(`options: ${why}`, 'send options as a JSON object, such as {"format": "text"}');

/** The `options` JSON object as sent (as a multipart part or a query parameter), or a 400. */
export function optionsOf(text: string | undefined): unknown {
  if (text === undefined || text.trim() === '') return undefined;
  if (text.length > OPTIONS_BYTES) throw badOptions(`over ${OPTIONS_BYTES} bytes`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw badOptions('not valid JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badOptions('not a JSON object');
  return v;
}

/**
 * Reads a file route's body within `limit` bytes of file: multipart/form-data (a part "file", and
 * a part "options" holding a JSON object), read by busboy as it streams; or any other type, the
 * body itself is the file, of that type. A Content-Length over the limit is refused before a byte
 * is read, a file that streams past it when it does. Nothing is inflated (Content-Encoding other
 * than identity is refused by the caller).
 */
export function readFileBody(req: IncomingMessage, limit: number): Promise<FileBody> {
  const length = Number(req.headers['content-length'] ?? NaN);
  // Multipart's boundaries, headers and options come on top of the file.
  if (length > limit + OPTIONS_BYTES + 16 * 1024) return Promise.reject(fileTooLarge(limit));
  // What this body may hold while it is read: its length, or the whole limit when it is chunked.
  const held = Number.isFinite(length) ? length : limit + OPTIONS_BYTES;
  if (reading > 0 && reading + held > READING_FILES * limit) return Promise.reject(busy());
  reading += held;
  const type = req.headers['content-type'] ?? '';
  const read = /^multipart\/form-data\s*;/i.test(type)
    ? readMultipart(req, limit)
    : readRaw(req, limit, type);
  return read.finally(() => (reading -= held));
}

/** Bytes of uploads being read in this process now, against READING_FILES files of the limit. */
let reading = 0;
const READING_FILES = 4;

const busy = () =>
  new SiftError(
    503,
    'server_busy',
    'sift is reading as many uploaded files as it may at once',
    'try again in a few seconds',
  ).retryAfter(5);

function readRaw(req: IncomingMessage, limit: number, contentType: string): Promise<FileBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (c: Buffer) => {
      received += c.length;
      if (received > limit) {
        req.off('data', onData);
        req.pause();
        reject(fileTooLarge(limit));
      } else chunks.push(c);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (received === 0 || received > limit) return received === 0 ? reject(noFile()) : undefined;
      resolve({ upload: { bytes: Buffer.concat(chunks, received), contentType } });
    });
    req.once('error', reject);
  });
}

function readMultipart(req: IncomingMessage, limit: number): Promise<FileBody> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        // A file's name as browsers and curl send it: UTF-8 in filename="…".
        defParamCharset: 'utf8',
        limits: { files: 1, fileSize: limit, fields: 4, fieldSize: OPTIONS_BYTES, parts: 8 },
      });
    } catch (err) {
      return reject(invalidRequest(`the multipart body cannot be read: ${(err as Error).message}`));
    }
    let upload: Upload | undefined;
    let options: string | undefined;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      req.resume();
      bb.destroy();
      reject(err);
    };
    // A body cut short ends every open part with an error: each is listened to, or it would
    // be thrown as uncaught.
    const cut = () => fail(invalidRequest('the multipart body ended before its closing boundary'));
    req.once('error', cut);
    req.once('aborted', cut);
    bb.on('file', (name, stream, info) => {
      stream.on('error', cut);
      if (name !== 'file') return void stream.resume();
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => fail(fileTooLarge(limit)));
      stream.on('end', () => {
        upload = {
          bytes: Buffer.concat(chunks),
          contentType: info.mimeType,
          name: info.filename || undefined,
        };
      });
    });
    bb.on('field', (name, value, info) => {
      if (name !== 'options') return;
      if (info.valueTruncated) return fail(badOptions(`over ${OPTIONS_BYTES} bytes`));
      options = value;
    });
    bb.on('partsLimit', () => fail(invalidRequest('the multipart body has too many parts')));
    bb.on('filesLimit', () => fail(invalidRequest('send one file, as the part "file"')));
    bb.on('error', (err: Error) => fail(invalidRequest(`the multipart body cannot be read: ${err.message}`)));
    bb.on('close', () => {
      if (failed) return;
      if (!upload || upload.bytes.length === 0) return reject(noFile());
      try {
        resolve({ upload, options: optionsOf(options) });
      } catch (err) {
        reject(err as Error);
      }
    });
    req.pipe(bb);
  });
}
