import { blockChars, type Block, type PageBlocks } from './blocks';
import { writeFormats } from './formats';
import { checkPixels, ocr, type ImageType } from './ocr';
import { isNamed } from './page-select';
import type { ParsedDocument, ReadJob } from './pdf-reader';

/**
 * An image (PNG, JPEG, WebP, TIFF) as a document: its text by OCR, unless asked not to (`ocr:
 * "never"`: no text), within MAX_PIXELS by its header before anything decodes it. A TIFF of
 * several pages is marked as a PDF's pages are.
 */
export async function readImage(job: ReadJob, type: ImageType): Promise<ParsedDocument> {
  checkPixels(job.bytes, type);
  if (job.ocr === 'never') {
    return {
      ...writeFormats([], null),
      metadata: { pages: 1 },
      truncated: false,
      hasText: false,
      family: 'image',
    };
  }
  const read = (await ocr(job.bytes, job.ocrLimits)).filter(
    (p, i, all) => p.length > 0 || i < all.length - 1,
  );
  let chars = 0;
  // A TIFF's pages the `pages` option leaves out are read by OCR (it reads the file whole), not kept.
  let truncated = read.some((_, i) => !isNamed(job.ranges, i + 1));
  const named = read.map((blocks, i) => ({ blocks, page: i + 1 })).filter((p) => isNamed(job.ranges, p.page));
  const pages: PageBlocks[] = named.map(({ blocks, page }) => {
    const kept: Block[] = [];
    for (const b of blocks) {
      if (truncated || chars + blockChars(b) > job.maxChars) {
        truncated = true;
        break;
      }
      chars += blockChars(b);
      kept.push(b);
    }
    return { page, blocks: kept };
  });
  return {
    ...writeFormats(pages, read.length > 1 ? 'page' : null),
    metadata: { pages: Math.max(1, read.length), ocr: true },
    truncated,
    hasText: pages.some((p) => p.blocks.length > 0),
    family: 'image',
  };
}
