import * as zlib from 'node:zlib';
import { TimeSlicer } from '../../src/common/time-slice';
import { readSitemapBody, type BodyReadOptions } from '../../src/crawl/sitemap-body';
import type { Found } from '../../src/crawl/sitemap-xml';

const base = 'https://example.com';

/** Everything a body holds, read with room for all of it. */
async function read(body: string | Buffer, o: Partial<BodyReadOptions> = {}) {
  const found: Found[] = [];
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const r = await readSitemapBody(bytes, {
    room: 64 * 1024 * 1024,
    cut: false,
    take: (f) => (found.push(f), true),
    slicer: new TimeSlicer(),
    ...o,
  });
  return { ...r, found };
}

/**
 * A file of several 64 KiB reads, its entries of every length, so that a tag, an entity, a CDATA
 * section and a line each fall across two reads somewhere; with the URLs it holds.
 */
function many(): { xml: string; lines: string; urls: string[] } {
  const urls = Array.from({ length: 3000 }, (_, i) => `${base}/m/${i}/${'x'.repeat(i % 97)}?a=1&b=2`);
  const entry = (u: string, i: number) =>
    i % 3 === 0
      ? `<url><loc>${u.replace('&', '&amp;')}</loc></url>`
      : i % 3 === 1
        ? `<sm:url><sm:loc><![CDATA[${u}]]></sm:loc></sm:url>`
        : `<url>\n  <loc>\n    ${u.replace('&', '&#38;')}\n  </loc>\n</url>`;
  return {
    xml: `<?xml version="1.0"?>\n<urlset xmlns:sm="x">${urls.map(entry).join('\n')}</urlset>`,
    lines: urls.join('\r\n'),
    urls,
  };
}

describe('a sitemap body, read as a stream', () => {
  it('in chunks: a tag, an entity, a CDATA or a line split between two reads is read whole', async () => {
    const { xml, lines, urls } = many();
    for (const [name, body] of [
      ['xml', xml],
      ['gzip', zlib.gzipSync(xml)],
      ['lines', lines],
      ['gzip lines', zlib.gzipSync(lines)],
    ] as const) {
      const r = await read(body);
      expect({ name, urls: r.found.map((f) => f.url) }).toEqual({ name, urls });
      expect(r).toMatchObject({ outcome: 'done', cut: false, failed: false });
    }
  });

  it('a token of a megabyte (a comment, a tag name, a CDATA) ends no read: what follows it is read', async () => {
    const mb = 1 << 20;
    const r = await read(
      `<urlset><!-- ${'c'.repeat(mb)} --><url><loc>${base}/h/1</loc></url>` +
        `<${'t'.repeat(mb)}></${'t'.repeat(mb)}><url><loc>${base}/h/2</loc></url>` +
        `<url><loc><![CDATA[${base}/${'d'.repeat(mb)}]]></loc></url><url><loc>${base}/h/3</loc></url></urlset>`,
    );
    expect(r.found.map((f) => f.url)).toEqual([`${base}/h/1`, `${base}/h/2`, `${base}/h/3`]);
  });

  it('XML or lines by its first character but white space (a BOM is white space), within 4 KiB', async () => {
    expect((await read(`\ufeff \n<urlset><url><loc>${base}/x</loc></url></urlset>`)).found).toEqual([
      { kind: 'entry', url: `${base}/x` },
    ]);
    const late = `${' '.repeat(5000)}<urlset><url><loc>${base}/x</loc></url></urlset>`;
    expect((await read(late)).found).toEqual([]);
    expect((await read(`${'\n'.repeat(5000)}${base}/y\n`)).found).toEqual([
      { kind: 'entry', url: `${base}/y` },
    ]);
    expect(
      (await read(`<sitemapindex><sitemap><loc>${base}/s.xml</loc></sitemap></sitemapindex>`)).found,
    ).toEqual([{ kind: 'sitemap', url: `${base}/s.xml` }]);
  });

  it('a bomb inflates no further than its room, and lines of junk are dropped before they cost a URL', async () => {
    const member = zlib.gzipSync(Buffer.alloc(1024 * 1024, 'not-a-url-line\n'));
    const bomb = Buffer.concat([
      zlib.gzipSync(`${base}/first\n`),
      ...Array.from({ length: 64 }, () => member),
    ]);
    const taken: Found[] = [];
    const r = await readSitemapBody(bomb, {
      room: 4 * 1024 * 1024,
      cut: false,
      take: (f) => (taken.push(f), true),
      slicer: new TimeSlicer(),
    });
    expect(r).toEqual({ bytes: 4 * 1024 * 1024, cut: true, failed: false, outcome: 'done' });
    expect(taken).toEqual([{ kind: 'entry', url: `${base}/first` }]);
  });

  it('a gzip that breaks partway keeps what came before; take saying no more ends the read', async () => {
    const whole = zlib.gzipSync(many().lines);
    const broken = await read(whole.subarray(0, whole.length >> 1));
    expect(broken.failed).toBe(true);
    expect(broken.found.length).toBeGreaterThan(100);
    expect(broken.found.map((f) => f.url)).toEqual(many().urls.slice(0, broken.found.length));
    let n = 0;
    const full = await read(whole, { take: () => ++n < 10 });
    expect(full.outcome).toBe('full');
    expect(n).toBe(10);
  });
});
