/** Block-aware text of a DOM subtree: paragraphs stay apart, inline runs stay together. */

const BLOCK = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'DD',
  'DETAILS',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'FORM',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'NAV',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'SUMMARY',
  'TABLE',
  'TBODY',
  'THEAD',
  'TFOOT',
  'TR',
  'UL',
  'CAPTION',
]);
const CELL = new Set(['TD', 'TH']);
const SKIP = new Set([
  'SCRIPT',
  'STYLE',
  'NOSCRIPT',
  'TEMPLATE',
  'SVG',
  'IFRAME',
  'OBJECT',
  'CANVAS',
  'HEAD',
]);

interface NodeLike {
  nodeType: number;
  nodeName: string;
  nodeValue: string | null;
  childNodes: ArrayLike<NodeLike>;
}

export function htmlText(root: NodeLike): string {
  const out: string[] = [];
  // An explicit stack: hostile pages nest deeper than the call stack allows.
  const stack: (NodeLike | string)[] = [root];
  let pre = 0;
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      if (item === '\u0000pre-end') pre--;
      else out.push(item);
      continue;
    }
    if (item.nodeType === 3) {
      const v = item.nodeValue ?? '';
      out.push(pre > 0 ? v : v.replace(/\s+/g, ' '));
      continue;
    }
    if (item.nodeType !== 1 && item.nodeType !== 9 && item.nodeType !== 11) continue;
    const name = item.nodeName.toUpperCase();
    if (SKIP.has(name)) continue;
    if (name === 'BR') {
      out.push('\n');
      continue;
    }
    const block = BLOCK.has(name);
    const after = block
      ? name === 'LI' || name === 'TR' || name === 'DT'
        ? '\n'
        : '\n\n'
      : CELL.has(name)
        ? '\t'
        : '';
    if (block) out.push('\n\n');
    if (after) stack.push(after);
    if (name === 'PRE') {
      pre++;
      stack.push('\u0000pre-end');
    }
    const kids = item.childNodes;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return tidy(out.join(''));
}

/** Trims every line, keeps at most one blank line between blocks. */
export function tidy(text: string): string {
  return text
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
