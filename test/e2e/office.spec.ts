import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { createTestApp, fleet, waitForJob, waitUntil } from '../support/app';
import { Fixture, send } from '../support/fixture';
import {
  BILLION_LAUGHS,
  bigSheet,
  deck,
  epubFile,
  externalEntity,
  rtfFile,
  odsFile,
  odtFile,
  wordBomb,
  wordFile,
  wordWithXml,
  workbook,
  zipOf,
} from '../support/office-files';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** A local file an external entity names: its words must never come back. */
const secret = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-xxe-')), 'secret.txt');
fs.writeFileSync(secret, 'the secret words');

describe('Office files through the app', () => {
  let app: INestApplication;
  let fx: Fixture;
  const post = (body: Record<string, unknown>) =>
    request(app.getHttpServer()).post('/v1/fetch').set(fleet).send(body);

  beforeAll(async () => {
    fx = new Fixture({
      '/report.docx': send(200, DOCX, await wordFile()),
      '/stock.xlsx': send(200, XLSX, await workbook()),
      // Served as bytes of no particular type: an Office file by its bytes and parts.
      '/download': send(200, 'application/octet-stream', deck()),
      '/open.odt': send(200, 'application/vnd.oasis.opendocument.text', odtFile()),
      '/sheets': send(200, 'application/octet-stream', odsFile()),
      '/book.epub': send(200, 'application/epub+zip', epubFile()),
      '/notes.rtf': send(200, 'application/rtf', rtfFile()),
      '/prices.csv': send(200, 'text/csv; charset=utf-8', 'Fruit,Price\nApple,1.20\n"Pear, ripe",0.90\n'),
      '/big.xlsx': send(200, XLSX, bigSheet(100_000)),
      '/bomb.docx': send(200, DOCX, wordBomb(1, 300 * 1024 * 1024)),
      '/laughs.docx': send(200, DOCX, wordWithXml(BILLION_LAUGHS)),
      '/xxe.docx': send(200, DOCX, wordWithXml(externalEntity(secret))),
      '/corrupt.docx': send(200, DOCX, Buffer.from('PK\x03\x04 and then nothing of a zip', 'latin1')),
      '/notes.zip': send(200, 'application/zip', zipOf([{ name: 'a.txt', data: Buffer.from('a') }])),
    });
    await fx.start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.1/32' }));
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await fx?.stop();
  });

  it('a Word file comes back in every format, titled by its properties', async () => {
    const r = await post({ url: fx.url('/report.docx'), formats: ['markdown', 'text', 'html'] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ verdict: 'ok', truncated: false, title: 'Quarterly Field Report' });
    const { markdown, text, html } = r.body.formats;
    expect(markdown).toMatch(/^### Sampling$/m);
    expect(markdown).toContain('- Walk the transect\n   - Count the nests\n1. Weigh the samples');
    expect(markdown).toContain('| North and South |  | Merged down |');
    expect(text).toContain('Ελληνικά κείμενα και 日本語のテキスト.');
    expect(html).toContain('<h2>Methods</h2>');
    expect(r.body.metadata).toMatchObject({
      author: 'Ada Lovelace',
      description: 'What the survey found',
      pages: 1,
    });
    // Cached, and written again in another format without parsing.
    expect((await post({ url: fx.url('/report.docx'), format: 'text' })).body).toMatchObject({
      cached: true,
      content: text,
    });
  });

  it('a workbook: its sheets as tables under their names; a deck behind an opaque type: its slides', async () => {
    const x = await post({ url: fx.url('/stock.xlsx') });
    expect(x.status).toBe(200);
    expect(x.body.content).toContain('<!-- sheet 2 -->\n\n# Суппліери\n\n| Name | City |');
    expect(x.body).toMatchObject({ title: 'Inventory', metadata: { pages: 2 } });
    const p = await post({ url: fx.url('/download') });
    expect(p.status).toBe(200);
    expect(p.body.content).toContain('<!-- slide 5 -->\n\n## Slide title 5\n\n- First point 5');
    expect(p.body.content).toContain('Notes: Say this on slide 3');
    expect(p.body).toMatchObject({ title: 'Launch Review', metadata: { pages: 5 } });
    // The pages option chooses slides (and is part of the cache key: the whole deck came first).
    const two = await post({ url: fx.url('/download'), pages: '2' });
    expect([two.body.content.match(/<!-- slide \d -->/g), two.body.truncated]).toEqual([
      ['<!-- slide 2 -->'],
      true,
    ]);
    expect(two.body).toMatchObject({ cached: false, metadata: { pages: 5 } });
  });

  it('OpenDocument files, e-books and RTF by their type, or by their bytes behind an opaque one', async () => {
    const t = await post({ url: fx.url('/open.odt') });
    expect(t.status).toBe(200);
    expect(t.body.content).toContain('### Sampling\n\n- Walk the transect\n   - Count the nests');
    expect(t.body).toMatchObject({ title: 'Open text', metadata: { author: 'Hedy Lamarr', pages: 3 } });
    const s = await post({ url: fx.url('/sheets') });
    expect(s.status).toBe(200);
    expect(s.body.content).toContain('<!-- sheet 1 -->\n\n# Stock\n\n| Item | Count |');
    const book = await post({ url: fx.url('/book.epub') });
    expect(book.status).toBe(200);
    expect(book.body.content).toContain('# Chapter One\n\nApples grow on trees & in orchards.');
    expect(book.body).toMatchObject({
      title: 'The Orchard Book',
      metadata: { author: 'Mary Shelley', pages: 2 },
    });
    const rtf = await post({ url: fx.url('/notes.rtf'), format: 'text' });
    expect(rtf.status).toBe(200);
    expect(rtf.body).toMatchObject({ title: 'Café Notes', metadata: { author: 'Ada Lovelace' } });
    expect(rtf.body.content).toContain('The price is 5€ today, roughly.');
  });

  it('a CSV file is a table in every format', async () => {
    const r = await post({ url: fx.url('/prices.csv'), formats: ['markdown', 'text'] });
    expect(r.status).toBe(200);
    expect(r.body.formats.markdown).toBe(
      '| Fruit | Price |\n| --- | --- |\n| Apple | 1.20 |\n| Pear, ripe | 0.90 |',
    );
    expect(r.body.formats.text).toBe('Fruit\tPrice\nApple\t1.20\nPear, ripe\t0.90');
    expect(r.body).toMatchObject({ verdict: 'ok', metadata: { pages: 1 } });
  });

  it('a 100,000-row sheet is cut and says so; hostile files are refused; sift answers meanwhile', async () => {
    const health: number[] = [];
    let over = false;
    const asked = Promise.all(
      ['/big.xlsx', '/bomb.docx', '/laughs.docx', '/xxe.docx', '/corrupt.docx', '/notes.zip'].map((p) =>
        post({ url: fx.url(p) }),
      ),
    ).finally(() => (over = true));
    await waitUntil(
      async () => {
        const t = Date.now();
        expect((await request(app.getHttpServer()).get('/healthz')).status).toBe(200);
        health.push(Date.now() - t);
        return over ? true : undefined;
      },
      'the answers for the hostile files',
      30_000,
      50,
    );
    const [big, bomb, laughs, xxe, corrupt, notes] = await asked;
    expect([big.status, big.body.truncated]).toEqual([200, true]);
    expect(big.body.content).toContain('| 9999 | item 9999 | 29997 |');
    expect([bomb.status, bomb.body.error.code]).toEqual([502, 'document_too_complex']);
    expect(bomb.body.error.message).toMatch(/would inflate to 314572800 bytes/);
    expect([laughs.status, laughs.body.error.code]).toEqual([502, 'unsupported_document']);
    expect(laughs.body.error.message).toMatch(/DOCTYPE/);
    expect([xxe.status, xxe.body.error.code]).toEqual([502, 'unsupported_document']);
    expect(JSON.stringify(xxe.body)).not.toContain('the secret words');
    expect([corrupt.status, corrupt.body.error.code]).toEqual([502, 'unsupported_document']);
    expect([notes.status, notes.body.error.code]).toEqual([502, 'unsupported_content_type']);
    // A health check is not held up by the parses (a generous bound: the machine may be busy).
    expect(Math.max(...health)).toBeLessThan(1000);
  }, 60_000);

  it('Office files as batch targets are read like any page; each hostile one fails alone', async () => {
    const paths = [
      '/report.docx',
      '/bomb.docx',
      '/stock.xlsx',
      '/laughs.docx',
      '/xxe.docx',
      '/corrupt.docx',
      '/big.xlsx',
    ];
    const res = await request(app.getHttpServer())
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: paths.map((p) => ({ url: fx.url(p) })), options: { max_age_s: 0 } });
    expect(res.status).toBe(202);
    await waitForJob(app, res.body.id);
    const results = await request(app.getHttpServer()).get(`/v1/batch/${res.body.id}/results`).set(fleet);
    const items = results.body.results as {
      status: string;
      result?: { content: string; truncated: boolean };
      error?: { code: string };
    }[];
    expect(items.map((i) => i.status)).toEqual([
      'done',
      'failed',
      'done',
      'failed',
      'failed',
      'failed',
      'done',
    ]);
    expect(items[0].result!.content).toContain('# Field Report');
    expect(items[1].error!.code).toBe('document_too_complex');
    expect(items[2].result!.content).toContain('| Bolts | 120 | TRUE |');
    expect(items.slice(3, 6).map((i) => i.error!.code)).toEqual(Array(3).fill('unsupported_document'));
    expect(JSON.stringify(items[4])).not.toContain('the secret words');
    expect(items[6].result!.truncated).toBe(true);
  });
});

describe('POST /v1/parse: a file sent, read as a page of its type', () => {
  let app: INestApplication;
  let word: Buffer;
  const parse = () => request(app.getHttpServer()).post('/v1/parse').set(fleet);

  beforeAll(async () => {
    word = await wordFile();
    ({ app } = await createTestApp({ SIFT_PDF_MAX_BYTES: String(1024 * 1024) }));
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  it('as multipart/form-data with options, or as the body itself with its type', async () => {
    const m = await parse()
      .attach('file', word, { filename: 'report.docx', contentType: 'application/octet-stream' })
      .field('options', JSON.stringify({ format: 'text', tokens: true }));
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({
      url: 'upload:report.docx',
      verdict: 'ok',
      title: 'Quarterly Field Report',
      cached: false,
      metadata: { author: 'Ada Lovelace', tokens: expect.any(Number) },
    });
    expect(m.body.content).toContain('• Walk the transect');
    const raw = await parse().set('content-type', DOCX).send(word);
    expect(raw.status).toBe(200);
    expect(raw.body.content).toMatch(/^# Field Report$/m);
    // An html file by its name, read by the extraction; options in the query beside a raw body.
    const html = await parse()
      .query({ options: JSON.stringify({ format: 'markdown' }) })
      .attach(
        'file',
        Buffer.from(
          '<html><head><title>Notes</title></head><body><article><h1>Notes</h1><p>' +
            'Words of a page sent as a file. '.repeat(20) +
            '</p></article></body></html>',
        ),
        'notes.html',
      );
    expect(html.status).toBe(200);
    expect(html.body).toMatchObject({ url: 'upload:notes.html', title: 'Notes' });
    expect(html.body.content).toContain('Words of a page sent as a file.');
  });

  it('refuses what it cannot read with a 4xx or a 502 naming why', async () => {
    const noFile = await parse().field('options', '{}');
    expect([noFile.status, noFile.body.error.code]).toEqual([400, 'invalid_request']);
    const empty = await parse().set('content-type', DOCX).send(Buffer.alloc(0));
    expect([empty.status, empty.body.error.code]).toEqual([400, 'invalid_request']);
    const badJson = await parse().attach('file', word, 'report.docx').field('options', '{nope');
    expect([badJson.status, badJson.body.error.message]).toEqual([400, 'options: not valid JSON']);
    const badOption = await parse().attach('file', word, 'report.docx').field('options', '{"format":"pdf"}');
    expect([badOption.status, badOption.body.error.code]).toEqual([400, 'invalid_request']);
    expect(badOption.body.error.message).toMatch(/format/);
    const url = await parse()
      .attach('file', word, 'report.docx')
      .field('options', '{"url":"http://x.test/"}');
    expect(url.status).toBe(400);
    const changes = await parse()
      .attach('file', word, 'report.docx')
      .field('options', '{"formats":["changes"]}');
    expect([changes.status, changes.body.error.message]).toEqual([400, expect.stringMatching(/changes/)]);
    const big = await parse()
      .set('content-type', DOCX)
      .send(Buffer.alloc(2 * 1024 * 1024, 1));
    expect([big.status, big.body.error.code]).toEqual([413, 'payload_too_large']);
    const bomb = await parse()
      .set('content-type', DOCX)
      .send(wordBomb(1, 300 * 1024 * 1024));
    expect([bomb.status, bomb.body.error.code]).toEqual([502, 'document_too_complex']);
    const laughs = await parse().attach('file', wordWithXml(BILLION_LAUGHS), 'laughs.docx');
    expect([laughs.status, laughs.body.error.code]).toEqual([502, 'unsupported_document']);
    const xxe = await parse().attach('file', wordWithXml(externalEntity(secret)), 'xxe.docx');
    expect([xxe.status, xxe.body.error.code]).toEqual([502, 'unsupported_document']);
    expect(JSON.stringify(xxe.body)).not.toContain('the secret words');
    const corrupt = await parse()
      .set('content-type', DOCX)
      .send(Buffer.from('PK\x03\x04 and then nothing', 'latin1'));
    expect([corrupt.status, corrupt.body.error.code]).toEqual([502, 'unsupported_document']);
    const sheet = await parse().attach('file', bigSheet(30_000), 'big.xlsx');
    expect([sheet.status, sheet.body.truncated]).toEqual([200, true]);
    const image = await parse().set('content-type', 'image/gif').send(Buffer.from('GIF89a', 'latin1'));
    expect([image.status, image.body.error.code]).toEqual([502, 'unsupported_content_type']);
    // A multipart body cut before its closing boundary: a 400, and sift goes on.
    const cut = await parse()
      .set('content-type', 'multipart/form-data; boundary=X')
      .send('--X\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello');
    expect([cut.status, cut.body.error.code]).toEqual([400, 'invalid_request']);
    expect((await request(app.getHttpServer()).get('/healthz')).status).toBe(200);
    // Without a token nothing is read.
    const anon = await request(app.getHttpServer()).post('/v1/parse').set('content-type', DOCX).send(word);
    expect(anon.status).toBe(401);
  });
});
