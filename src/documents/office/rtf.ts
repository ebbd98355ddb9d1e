import * as iconv from 'iconv-lite';
import type { Block } from '../blocks';
import { Gathered } from './gathered';
import type { OfficeRead } from './office-reader';
import { MAX_COLUMNS, MAX_ROWS } from './xlsx';

/** Groups nested deeper than this are not a document any word processor writes. */
const MAX_DEPTH = 200;

/** Destinations whose text is not the document's (tables of fonts, styles, pictures, fields' codes…). */
const SKIPPED = new Set([
  'fonttbl', 'colortbl', 'stylesheet', 'pict', 'header', 'headerl', 'headerr', 'headerf', 'footer',
  'footerl', 'footerr', 'footerf', 'fldinst', 'themedata', 'colorschememapping', 'latentstyles',
  'datastore', 'xmlnstbl', 'listtable', 'listoverridetable', 'rsidtbl', 'generator', 'filetbl',
  'revtbl', 'object', 'objdata', 'pntext', 'pntxta', 'pntxtb', 'listtext', 'bkmkstart', 'bkmkend',
  'operator', 'mmathPr', 'userprops', 'xe', 'tc', 'nonshppict', 'shpinst', 'sp',
]); // prettier-ignore
/** Fields of \info kept as metadata. */
const INFO = new Set(['title', 'author', 'subject', 'doccomm']);

interface State {
  skip: boolean;
  /** Characters a \u's fallback takes (\ucN). */
  uc: number;
  info?: string;
}

/**
 * A Rich Text Format file, read token by token: paragraphs (\par), headings by outline level
 * (\outlinelevelN), list paragraphs (\ls, \ilvl) as items, table rows (\cell, \row) as tables;
 * characters by the file's code page (\ansicpgN, via iconv-lite) and \uN; every destination that
 * is not text (font and style tables, pictures, field codes, headers) left out. Groups deeper than
 * 200 are refused; what is read stops at the character cap.
 */
export function readRtf(bytes: Uint8Array, maxChars: number): OfficeRead {
  const src = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (!src.startsWith('{\\rtf')) throw new Error('the file does not start as RTF does ({\\rtf)');
  const out = new Gathered(maxChars);
  const info: Record<string, string> = {};
  let codepage = 'windows-1252';
  const stack: State[] = [];
  let st: State = { skip: false, uc: 1 };
  let text = '';
  let hex: number[] = [];
  let para: { outline?: number; list?: number; intbl: boolean } = { intbl: false };
  let row: string[] = [];
  let rows: string[][] = [];
  let skipChars = 0;
  /** Table rows or cells past the caps were left out. */
  let cut = false;

  const put = (s: string) => {
    if (st.info !== undefined) info[st.info] = (info[st.info] ?? '') + s;
    else if (!st.skip && text.length <= maxChars) text += s;
  };
  const flushHex = () => {
    if (hex.length > 0) put(iconv.decode(Buffer.from(hex), codepage));
    hex = [];
  };
  const endTable = () => {
    if (rows.length > 0) out.add({ kind: 'table', rows });
    rows = [];
  };
  const endPara = () => {
    flushHex();
    // A paragraph in a table cell is part of the cell's text, ended by \cell.
    if (para.intbl) return void (text += ' ');
    const t = text.replace(/\s+/g, ' ').trim();
    text = '';
    endTable();
    if (!t) return;
    let b: Block;
    if (para.outline !== undefined)
      b = { kind: 'heading', size: 0, level: Math.min(6, para.outline + 1), text: t };
    else if (para.list !== undefined)
      b = { kind: 'item', ordered: false, marker: '•', text: t, depth: para.list };
    else b = { kind: 'paragraph', text: t };
    out.add(b);
  };

  for (let i = 0; i < src.length && !out.truncated;) {
    const c = src[i];
    if (c === '{' || c === '}') {
      flushHex();
      if (c === '{') {
        if (stack.length >= MAX_DEPTH) throw new Error(`groups nest deeper than ${MAX_DEPTH}`);
        stack.push(st);
        st = { ...st };
        // A destination marked optional (\*) is one sift does not know: left out.
        if (src.startsWith('{\\*', i)) st.skip = true;
      } else st = stack.pop() ?? st;
      i++;
      continue;
    }
    if (c !== '\\') {
      if (c !== '\r' && c !== '\n') {
        flushHex();
        if (skipChars > 0) skipChars--;
        else put(c);
      }
      i++;
      continue;
    }
    const m = /^\\(?:([a-zA-Z]{1,32})(-?\d{1,10})? ?|'([0-9a-fA-F]{2})|(.))/s.exec(src.slice(i, i + 48));
    if (!m) {
      i++;
      continue;
    }
    i += m[0].length;
    if (m[3] !== undefined) {
      if (skipChars > 0) skipChars--;
      else hex.push(parseInt(m[3], 16));
      continue;
    }
    flushHex();
    if (m[4] !== undefined) {
      const sym = m[4];
      if (sym === '\\' || sym === '{' || sym === '}') put(sym);
      else if (sym === '~') put('\u00a0');
      else if (sym === '\n' || sym === '\r') endPara();
      continue;
    }
    const word = m[1];
    const n = m[2] === undefined ? undefined : Number(m[2]);
    if (SKIPPED.has(word)) st.skip = true;
    else if (word === 'info') st.skip = true;
    else if (INFO.has(word) && stack.length > 0) {
      st.info = word;
      st.skip = false;
    } else if (word === 'ansicpg' && n !== undefined)
      codepage = iconv.encodingExists(`cp${n}`) ? `cp${n}` : codepage;
    else if (word === 'uc' && n !== undefined) st.uc = Math.max(0, Math.min(10, n));
    else if (word === 'u' && n !== undefined) {
      put(String.fromCharCode(n < 0 ? n + 65536 : n));
      skipChars = st.uc;
    } else if (word === 'par' || word === 'sect' || word === 'page') endPara();
    else if (word === 'pard') para = { intbl: false };
    else if (word === 'outlinelevel' && n !== undefined && n >= 0 && n < 9) para.outline = n;
    else if (word === 'ls') para.list = para.list ?? 0;
    else if (word === 'ilvl' && n !== undefined) para.list = Math.max(0, Math.min(8, n));
    else if (word === 'intbl') para.intbl = true;
    else if (word === 'cell' || word === 'nestcell') {
      if (row.length < MAX_COLUMNS) row.push(text.replace(/\s+/g, ' ').trim());
      else cut = true;
      text = '';
    } else if (word === 'row' || word === 'nestrow') {
      if (row.some((x) => x !== '') && rows.length < MAX_ROWS) rows.push(row);
      else if (rows.length >= MAX_ROWS) cut = true;
      row = [];
      text = '';
    } else if (word === 'line' || word === 'tab') put(' ');
    else if (word === 'emdash') put('—');
    else if (word === 'endash') put('–');
    else if (word === 'bullet') put('•');
    else if (word === 'lquote' || word === 'rquote') put(word === 'lquote' ? '‘' : '’');
    else if (word === 'ldblquote' || word === 'rdblquote') put(word === 'ldblquote' ? '“' : '”');
  }
  para.intbl = false;
  endPara();
  endTable();
  const clean = (s?: string) => s?.replace(/\s+/g, ' ').trim().slice(0, 1000) || undefined;
  const metadata = {
    title: clean(info.title),
    author: clean(info.author),
    description: clean(info.subject ?? info.doccomm),
    pages: 1,
  };
  for (const k of Object.keys(metadata) as (keyof typeof metadata)[])
    if (metadata[k] === undefined) delete metadata[k];
  return {
    pages: [{ page: 1, blocks: out.take() }],
    marker: null,
    truncated: out.truncated || cut,
    metadata,
  };
}
