import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { decodeAs, encodingName, SINGLE_BYTE } from '../../src/fetch/charsets';
import { decodeBody } from '../../src/fetch/decode';

/**
 * The standard, as @exodus/bytes implements it (an ES module: asked in a child process): every
 * label it lists with the name it maps to, and the 256 code points of each single-byte encoding.
 */
function standard(): { labels: Record<string, string>; tables: Record<string, number[]> } {
  const root = path.join(__dirname, '../../node_modules/@exodus/bytes');
  const script = `
    import { TextDecoder, labelToName } from ${JSON.stringify(pathToFileURL(path.join(root, 'encoding.js')).href)};
    import labels from ${JSON.stringify(pathToFileURL(path.join(root, 'fallback/encoding.labels.js')).href)};
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const out = { labels: {}, tables: {} };
    for (const [name, more] of Object.entries(labels)) for (const l of [name, ...more]) out.labels[l] = labelToName(l).toLowerCase();
    for (const name of ${JSON.stringify(SINGLE_BYTE)}) out.tables[name] = [...new TextDecoder(name).decode(all)].map((c) => c.codePointAt(0));
    process.stdout.write(JSON.stringify(out));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  );
}

describe('charsets, as the WHATWG Encoding Standard says', () => {
  const std = standard();
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);

  it('every single-byte encoding decodes every byte as the standard index says', () => {
    expect(Object.keys(std.tables)).toHaveLength(28);
    const wrong: string[] = [];
    for (const name of SINGLE_BYTE) {
      const got = [...decodeAs(name, all)].map((c) => c.codePointAt(0));
      got.forEach((cp, b) => {
        if (cp !== std.tables[name][b]) wrong.push(`${name} 0x${b.toString(16)}: U+${cp!.toString(16)}`);
      });
    }
    expect(wrong).toEqual([]);
  });

  it('every label names the encoding the standard maps it to (the replacement labels: none)', () => {
    const labels = Object.entries(std.labels);
    expect(labels.length).toBeGreaterThan(200);
    const wrong = labels
      .map(([label, name]) => [
        label,
        encodingName(label.toUpperCase()) ?? 'unknown',
        name === 'replacement' ? 'unknown' : name,
      ])
      .filter(([, got, want]) => got !== want);
    expect(wrong).toEqual([]);
  });

  it('a windows-1252 page, by header or <meta>, and latin1 / iso-8859-1 labels: no C1 controls', () => {
    const bytes = Buffer.from([0x49, 0x74, 0x92, 0x73, 0x20, 0x93, 0x71, 0x94, 0x20, 0x80, 0x35]);
    const want = 'It\u2019s \u201cq\u201d \u20ac5';
    for (const label of ['windows-1252', 'iso-8859-1', 'latin1', 'us-ascii', 'cp1252']) {
      expect(decodeBody(bytes, `text/plain; charset=${label}`, false)).toBe(want);
    }
    const page = Buffer.concat([Buffer.from('<html><head><meta charset="windows-1252"><title>'), bytes]);
    expect(decodeBody(page, 'text/html', true)).toContain(want);
    // A <meta> cannot make the page UTF-16: it is read as UTF-8.
    const utf16meta = Buffer.from('<meta charset="utf-16"><p>caf\u00e9</p>', 'utf8');
    expect(decodeBody(utf16meta, 'text/html', true)).toContain('caf\u00e9');
  });
});
