import * as iconv from 'iconv-lite';

/**
 * Text decoding as the WHATWG Encoding Standard says. Node's TextDecoder names every label as the
 * standard does, but its single-byte tables are not the standard's (windows-1252 and its labels,
 * latin1 and ascii among them, decode as ISO-8859-1 since Node 20.18.3: `’` came back as U+0092;
 * windows-874, 1253, 1255, ibm866 and koi8-u differ too; iso-8859-16 is missing). Single-byte text
 * is decoded with iconv-lite's tables, corrected where they differ from the standard's index
 * (test/unit/charsets.spec.ts holds every byte of every single-byte encoding against it).
 */

/** iconv-lite's name for each single-byte encoding of the standard, where it differs. */
const ICONV_NAME: Record<string, string> = { 'iso-8859-8-i': 'iso-8859-8', 'x-mac-cyrillic': 'maccyrillic' };

/** Bytes whose code point in the standard's index is not iconv-lite's. */
const CORRECTIONS: Record<string, Record<number, number>> = {
  'koi8-u': { 0xae: 0x045e, 0xbe: 0x040e },
  macintosh: { 0xbd: 0x03a9, 0xdb: 0x20ac, 0xf0: 0xf8ff },
  'x-mac-cyrillic': { 0xa2: 0x0490, 0xb6: 0x0491, 0xff: 0x20ac },
};

export const SINGLE_BYTE = [
  'ibm866',
  'iso-8859-2',
  'iso-8859-3',
  'iso-8859-4',
  'iso-8859-5',
  'iso-8859-6',
  'iso-8859-7',
  'iso-8859-8',
  'iso-8859-8-i',
  'iso-8859-10',
  'iso-8859-13',
  'iso-8859-14',
  'iso-8859-15',
  'iso-8859-16',
  'koi8-r',
  'koi8-u',
  'macintosh',
  'windows-874',
  'windows-1250',
  'windows-1251',
  'windows-1252',
  'windows-1253',
  'windows-1254',
  'windows-1255',
  'windows-1256',
  'windows-1257',
  'windows-1258',
  'x-mac-cyrillic',
] as const;

const singleByte = new Set<string>(SINGLE_BYTE);
const tables = new Map<string, Uint16Array>();

/**
 * The standard's name for a label (`latin1` is windows-1252), undefined for none it can decode
 * (the `replacement` labels are taken as unknown: the next source of a charset is asked).
 */
export function encodingName(label: string): string | undefined {
  const l = label.trim().toLowerCase();
  if (l === 'iso-8859-16' || l === 'x-user-defined') return l;
  try {
    return new TextDecoder(l).encoding;
  } catch {
    return undefined;
  }
}

/** `bytes` as text in the named encoding (a name encodingName gave). */
export function decodeAs(name: string, bytes: Uint8Array): string {
  if (name === 'x-user-defined') return viaTable(userDefined(), bytes);
  if (singleByte.has(name)) return viaTable(tableOf(name), bytes);
  return new TextDecoder(name).decode(bytes);
}

function viaTable(table: Uint16Array, bytes: Uint8Array): string {
  const units = new Uint16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) units[i] = table[bytes[i]];
  return new TextDecoder('utf-16le').decode(units);
}

function tableOf(name: string): Uint16Array {
  let t = tables.get(name);
  if (t) return t;
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const text = iconv.decode(all, ICONV_NAME[name] ?? name);
  t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) t[i] = text.charCodeAt(i);
  // The windows- code pages: a byte of 0x80-0x9F the code page leaves unassigned is its C1
  // control in the standard's index, not U+FFFD.
  if (name.startsWith('windows-')) for (let i = 0x80; i < 0xa0; i++) if (t[i] === 0xfffd) t[i] = i;
  for (const [b, cp] of Object.entries(CORRECTIONS[name] ?? {})) t[Number(b)] = cp;
  tables.set(name, t);
  return t;
}

/** x-user-defined: ASCII, then 0x80-0xFF to U+F780-U+F7FF. */
function userDefined(): Uint16Array {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) t[i] = i < 0x80 ? i : 0xf780 + i - 0x80;
  return t;
}
