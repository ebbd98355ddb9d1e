import * as path from 'node:path';
import type { PageRange } from '../page-ranges';
import { isNamed } from '../page-select';
import type { Block, PageBlocks } from '../blocks';
import { Gathered } from './gathered';
import type { OfficeRead } from './office-reader';
import { propertiesOf } from './properties';
import { readXml } from './xml';
import type { Zip } from './zip';

/** A part's relationships: id → part name, resolved against the part's folder. */
function relationships(zip: Zip, part: string): Map<string, { target: string; type: string }> {
  const out = new Map<string, { target: string; type: string }>();
  const rels = `${path.posix.dirname(part)}/_rels/${path.posix.basename(part)}.rels`;
  const bytes = zip.read(rels);
  if (!bytes) return out;
  readXml(bytes, rels, {
    open: (n, a) => {
      if (n !== 'Relationship' || !a.Id || !a.Target || a.TargetMode === 'External') return;
      const target = a.Target.startsWith('/')
        ? a.Target.slice(1)
        : path.posix.normalize(`${path.posix.dirname(part)}/${a.Target}`);
      out.set(a.Id, { target, type: a.Type ?? '' });
    },
  });
  return out;
}

/** A slide's (or its notes') text: each shape's paragraphs; a title placeholder's are its heading. */
function shapes(zip: Zip, part: string, notes: boolean): Block[] {
  const bytes = zip.read(part);
  if (!bytes) return [];
  const blocks: Block[] = [];
  let placeholder: string | undefined;
  let para: { text: string; level: number; bullet: boolean } | undefined;
  let inText = false;
  readXml(bytes, part, {
    open: (n, a) => {
      // A shape, table, picture or connector starts without the placeholder of the one before.
      if (n === 'p:sp' || n === 'p:graphicFrame' || n === 'p:pic' || n === 'p:cxnSp') placeholder = undefined;
      else if (n === 'p:ph') placeholder = a.type ?? 'body';
      else if (n === 'a:p') para = { text: '', level: 0, bullet: false };
      else if (n === 'a:pPr' && para) para.level = Math.max(0, Math.min(8, Number(a.lvl) || 0));
      else if ((n === 'a:buChar' || n === 'a:buAutoNum') && para) para.bullet = true;
      else if (n === 'a:t') inText = true;
      else if (n === 'a:br' && para) para.text += ' ';
    },
    text: (t) => {
      if (inText && para) para.text += t;
    },
    close: (n) => {
      if (n === 'a:t') inText = false;
      else if (n === 'a:p' && para) {
        const text = para.text.replace(/\s+/g, ' ').trim();
        // Notes pages repeat the slide's image and number in placeholders of their own.
        const furniture = notes && placeholder !== undefined && placeholder !== 'body';
        if (text && !furniture) {
          if (!notes && (placeholder === 'title' || placeholder === 'ctrTitle'))
            blocks.push({ kind: 'heading', size: 0, level: 2, text });
          else if (para.bullet || para.level > 0)
            blocks.push({ kind: 'item', ordered: false, marker: '•', text, depth: para.level });
          else blocks.push({ kind: 'paragraph', text: notes ? `Notes: ${text}` : text });
        }
        para = undefined;
      }
    },
  });
  return blocks;
}

/**
 * A deck (pptx): each slide in the deck's order, marked `<!-- slide N -->`, its title as a
 * heading, its other shapes' paragraphs (bulleted or indented ones as list items), then its
 * speaker notes.
 */
export function readPptx(zip: Zip, maxChars: number, ranges?: PageRange[]): OfficeRead {
  const deck = 'ppt/presentation.xml';
  const rels = relationships(zip, deck);
  const slides: string[] = [];
  readXml(zip.read(deck)!, deck, {
    open: (n, a) => {
      if (n !== 'p:sldId') return;
      const r = rels.get(a['r:id'] ?? '');
      if (r) slides.push(r.target);
    },
  });
  const out = new Gathered(maxChars);
  const pages: PageBlocks[] = [];
  for (const [i, slide] of slides.entries()) {
    if (out.truncated) break;
    if (!isNamed(ranges, i + 1)) continue;
    for (const b of shapes(zip, slide, false)) out.add(b);
    const notes = [...relationships(zip, slide).values()].find((r) => r.type.endsWith('/notesSlide'));
    if (notes) for (const b of shapes(zip, notes.target, true)) out.add(b);
    pages.push({ page: i + 1, blocks: out.take() });
  }
  return {
    pages,
    marker: 'slide',
    truncated: out.truncated || pages.length < slides.length,
    metadata: propertiesOf(zip, slides.length),
  };
}
