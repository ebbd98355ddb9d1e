import type { Block } from './blocks';
import { MAX_PIXELS, ocr, pgm, type OcrLimits } from './ocr';
import { ReadFailure } from './read-failure';

type PdfJs = typeof import('pdfjs-dist');
type Doc = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
type Page = Awaited<ReturnType<Doc['getPage']>>;

/** Images read of one page at most: a scan is one, a page of photos a few. */
const MAX_IMAGES = 4;
/** An image smaller than this (a logo, a rule, a bullet) holds no text worth reading. */
const MIN_PIXELS = 10_000;

/** An image as pdf.js decodes it: its pixels as grey (1 bit), RGB or RGBA (ImageKind 1, 2, 3). */
export interface DecodedImage {
  width: number;
  height: number;
  kind?: number;
  data?: Uint8Array | Uint8ClampedArray;
}

/** The image's pixels, one grey byte each, or undefined for a kind not read. */
export function grey(img: DecodedImage): Uint8Array | undefined {
  const { width: w, height: h, data } = img;
  if (!data) return undefined;
  const out = new Uint8Array(w * h);
  if (img.kind === 1) {
    const row = (w + 7) >> 3;
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) out[y * w + x] = (data[y * row + (x >> 3)] >> (7 - (x & 7))) & 1 ? 255 : 0;
    return out;
  }
  const step = img.kind === 2 ? 3 : img.kind === 3 ? 4 : 0;
  if (step === 0 || data.length < w * h * step) return undefined;
  for (let i = 0, j = 0; i < out.length; i++, j += step)
    out[i] = (data[j] * 299 + data[j + 1] * 587 + data[j + 2] * 114) / 1000;
  return out;
}

/** An object of the page (or the document's, for an image shared between pages) once it is decoded. */
function objectOf(page: Page, name: string): Promise<DecodedImage | undefined> {
  const objs = name.startsWith('g_') ? page.commonObjs : page.objs;
  return new Promise((resolve) => {
    try {
      objs.get(name, (v: unknown) => resolve(v as DecodedImage | undefined));
    } catch {
      resolve(undefined);
    }
  });
}

/**
 * A page's text by OCR: the images it paints (up to MAX_IMAGES, each within MAX_PIXELS), as
 * pdf.js decodes them, turned grey and read by Tesseract in turn. `images` says how many were read:
 * none means the page has nothing to read, not that OCR found no text.
 */
export async function ocrPage(
  pdfjs: PdfJs,
  doc: Doc,
  n: number,
  limits: OcrLimits,
): Promise<{ blocks: Block[]; images: number; failure?: string }> {
  const page = await doc.getPage(n).catch(() => undefined);
  if (!page) return { blocks: [], images: 0 };
  try {
    const ops = await page.getOperatorList().catch(() => undefined);
    if (!ops) return { blocks: [], images: 0 };
    const names: string[] = [];
    for (let i = 0; i < ops.fnArray.length && names.length < MAX_IMAGES; i++) {
      if (ops.fnArray[i] === pdfjs.OPS.paintImageXObject)
        names.push(String((ops.argsArray[i] as unknown[])[0]));
    }
    const blocks: Block[] = [];
    let images = 0;
    let failure: string | undefined;
    for (const name of names) {
      const img = await objectOf(page, name);
      // An image too small to hold text, or too large to read (past MAX_PIXELS), is left out: the
      // page is read as far as it can be, as a page pdf.js cannot read is.
      if (!img || img.width * img.height < MIN_PIXELS || img.width * img.height > MAX_PIXELS) continue;
      const g = grey(img);
      if (!g) continue;
      images++;
      try {
        for (const p of await ocr(pgm(img.width, img.height, g), limits)) blocks.push(...p);
      } catch (err) {
        // One image Tesseract cannot read (or could not start for) costs that image, not the page.
        if (err instanceof ReadFailure && err.kind === 'memory') throw err;
        failure ??= err instanceof ReadFailure ? err.message : String(err);
      }
    }
    return { blocks, images, failure };
  } finally {
    page.cleanup();
  }
}
