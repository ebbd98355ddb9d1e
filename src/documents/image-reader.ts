import type { Block, PageBlocks } from './blocks';
import { withFormats, writeFormats } from './formats';
import { Gathered } from './office/gathered';
import { checkPixels, ocr, type ImageType } from './ocr';
import type { PageRange } from './page-ranges';
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
    return withFormats(writeFormats([], null), {
      metadata: { pages: 1 },
      truncated: false,
      hasText: false,
      family: 'image' as const,
    });
  }
  const read = (await ocr(job.bytes, job.ocrLimits)).filter(
    (p, i, all) => p.length > 0 || i < all.length - 1,
  );
  const { pages, truncated } = pagesKept(read, job.ranges, job.maxChars);
  return withFormats(writeFormats(pages, read.length > 1 ? 'page' : null), {
    metadata: { pages: Math.max(1, read.length), ocr: true },
    truncated,
    hasText: pages.some((p) => p.blocks.length > 0),
    family: 'image' as const,
  });
}

/**
 * The pages OCR read that the `pages` option names (a TIFF's; OCR reads the file whole), each
 * keeping its number, their blocks up to `maxChars` in all; `truncated` when a page or a block is
 * left out.
 */
export function pagesKept(
  read: Block[][],
  ranges: PageRange[] | undefined,
  maxChars: number,
): { pages: PageBlocks[]; truncated: boolean } {
  const out = new Gathered(maxChars);
  const pages: PageBlocks[] = [];
  for (const [i, blocks] of read.entries()) {
    if (!isNamed(ranges, i + 1)) continue;
    for (const b of blocks) if (!out.add(b)) break;
    pages.push({ page: i + 1, blocks: out.take() });
  }
  return { pages, truncated: out.truncated || pages.length < read.length };
}
