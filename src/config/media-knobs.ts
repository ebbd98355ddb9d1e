import { IsIn, IsString, Matches, MinLength } from 'class-validator';
import { int, text } from './knob';
import { firstExecutable, parseSecretKey } from './parsers';

// The knobs of rendering and of documents (SCHEMA's sections `render` and `documents`).

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Where Chromium is looked for, in order: Debian's headless shell, then its full browser. */
export const CHROMIUM_PATHS = '/usr/bin/chromium-headless-shell:/usr/bin/chromium';

export const RENDER_KNOBS = {
  chromiumPath: text(
    {
      env: 'SIFT_CHROMIUM_PATH',
      default: CHROMIUM_PATHS,
      rules: [IsString(), MinLength(1)],
      read: firstExecutable,
    },
    "the Chromium that renders pages: the first of this `:` list that is there (Debian's `chromium-headless-shell`, the browser without its window machinery, else its `chromium`); none there: rendering is off, sift still starts",
  ),
  renderPages: int(
    { env: 'SIFT_RENDER_PAGES', default: 2, min: 1, max: 64 },
    'pages rendered at once; more wait',
  ),
  renderRecycleAfter: int(
    { env: 'SIFT_RENDER_RECYCLE_AFTER', default: 200, min: 1, max: 1_000_000 },
    'renders before the browser is replaced by a fresh one',
  ),
  renderMaxMemory: int(
    { env: 'SIFT_RENDER_MAX_MEMORY', default: GiB, min: 64 * MiB, bytes: true },
    "the browser's processes' memory (proportional set size), read at least every 250 ms while it renders: a render that takes it over ends 502 `render_too_costly` and the browser is replaced",
  ),
  chromiumNoSandbox: text(
    {
      env: 'SIFT_CHROMIUM_NO_SANDBOX',
      default: '0',
      rules: [IsIn(['0', '1'])],
      read: (v: string) => v === '1',
    },
    '`1` runs Chromium without its sandbox (start-up warns); by default it runs sandboxed, as an unprivileged user when sift runs as root',
  ),
  secretKey: text(
    { env: 'SIFT_SECRET_KEY', default: '', read: parseSecretKey },
    'the key browser profiles are sealed with at rest (AES-256-GCM): 32 random bytes, as 64 hex digits or in base64 (`openssl rand -hex 32`); unset, profiles are refused. Keep it: profiles sealed with another key cannot be read',
  ),
  allowPageScripts: text(
    {
      env: 'SIFT_ALLOW_PAGE_SCRIPTS',
      default: '0',
      rules: [IsIn(['0', '1'])],
      read: (v: string) => v === '1',
    },
    "`1` lets fleet callers run their own script in a rendered page (the `executeJavascript` action); restricted callers never may. Its requests pass sift's proxy and the caller's address policy like the page's",
  ),
};

export const DOCUMENT_KNOBS = {
  pdfMaxBytes: int(
    { env: 'SIFT_PDF_MAX_BYTES', default: 32 * MiB, min: 1, bytes: true },
    'the download cap for a PDF (other pages: 10 MiB); over it, 502 `too_large`',
  ),
  pdfMaxPages: int(
    { env: 'SIFT_PDF_MAX_PAGES', default: 500, min: 1, max: 100_000 },
    'pages of a PDF read at most; the rest are left out and the answer says `truncated`',
  ),
  pdfMaxMb: int(
    { env: 'SIFT_PDF_MAX_MB', default: 256, min: 64, max: 65_536 },
    "a PDF parser process's memory limit in MB (its data segment); a document that needs more fails 502 `document_too_complex`",
  ),
  pdfMaxCpuMs: int(
    { env: 'SIFT_PDF_MAX_CPU_MS', default: 10_000, min: 100, max: 3_600_000 },
    "CPU time one document may take in its parser (besides the request's deadline); past it, 502 `document_too_complex`",
  ),
  ocrLangs: text(
    {
      env: 'SIFT_OCR_LANGS',
      default: 'eng',
      rules: [IsString(), Matches(/^[a-z_]{3,20}(\+[a-z_]{3,20}){0,9}$/i)],
    },
    "Tesseract's languages for OCR of images and scanned pages, joined by `+` (`eng+deu`); each needs Debian's `tesseract-ocr-<lang>`",
  ),
};
