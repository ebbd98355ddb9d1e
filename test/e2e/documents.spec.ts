import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { createTestApp, waitForJob, waitUntil, fleet } from '../support/app';
import { Fixture, send } from '../support/fixture';
import { manyPages, onePage, scan, withMetadata } from '../support/pdf-documents';
import { deflateBomb, encryptedDocument } from '../support/pdf-hostile';

/** `mb` MiB that begin as a PDF and go on as nothing readable. */
const broken = (mb: number) => Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(mb << 20, 0x20)]);

describe('PDF documents through the app', () => {
  let app: INestApplication;
  let fx: Fixture;
  let bomb: Buffer;
  const post = (body: Record<string, unknown>) =>
    request(app.getHttpServer()).post('/v1/fetch').set(fleet).send(body);

  beforeAll(async () => {
    bomb = await deflateBomb('text');
    const report = await onePage();
    fx = new Fixture({
      '/report.pdf': send(200, 'application/pdf', report),
      // Served as bytes of no particular type: a PDF by its first bytes.
      '/download': send(200, 'application/octet-stream', report),
      '/book.pdf': send(200, 'application/pdf', await manyPages(12)),
      '/meta.pdf': send(200, 'application/pdf', await withMetadata({ xmp: true })),
      '/scan.pdf': send(200, 'application/pdf', await scan()),
      '/locked.pdf': send(200, 'application/pdf', encryptedDocument()),
      '/bomb.pdf': send(200, 'application/pdf', bomb),
      // Around the caps: pages 10 MiB, documents SIFT_PDF_MAX_BYTES (16 MiB below).
      '/12mb.pdf': send(200, 'application/pdf', broken(12)),
      '/12mb-opaque': send(200, 'application/octet-stream', broken(12)),
      '/17mb.pdf': send(200, 'application/pdf', broken(17)),
      '/17mb-opaque': send(200, 'application/octet-stream', broken(17)),
      '/12mb.bin': send(200, 'application/octet-stream', Buffer.alloc(12 << 20, 0x41)),
      '/image.gif': send(200, 'image/gif', Buffer.from('GIF89a', 'latin1')),
      '/gone.pdf': send(404, 'application/pdf', report),
    });
    await fx.start();
    ({ app } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.1/32',
      SIFT_PDF_MAX_BYTES: String(16 << 20),
      SIFT_PDF_MAX_PAGES: '10',
      // Below the default 256: the bomb needs far more, a document of text far less.
      SIFT_PDF_MAX_MB: '192',
    }));
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await fx?.stop();
  });

  it('a PDF comes back in every format from one fetch: headings, lists and page markers', async () => {
    const r = await post({ url: fx.url('/report.pdf'), formats: ['markdown', 'text', 'html'] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      verdict: 'ok',
      truncated: false,
      rendered: false,
      title: 'Annual Report',
    });
    expect(r.body.content_type).toBe('application/pdf');
    const { markdown, text, html } = r.body.formats;
    expect(markdown).toMatch(/^# Annual Report$/m);
    expect(markdown).toContain('<!-- page 1 -->');
    expect(markdown).toContain('reviewed every proposal');
    expect(markdown).toMatch(/^- first bullet point$/m);
    expect(text).toContain('reviewed every proposal');
    expect(text).not.toContain('<!--');
    expect(text).not.toContain('# ');
    expect(html).toMatch(/<h1>Annual Report<\/h1>/);
    expect(r.body.metadata.pages).toBe(1);
    // A second call is the cached copy, in another format without parsing again.
    const again = await post({ url: fx.url('/report.pdf'), format: 'text' });
    expect(again.body).toMatchObject({ cached: true, content: text });
  });

  it('a PDF served as application/octet-stream is read by its first bytes', async () => {
    const r = await post({ url: fx.url('/download'), format: 'markdown' });
    expect(r.status).toBe(200);
    expect(r.body.content).toContain('reviewed every proposal');
  });

  it('metadata: title, author, subject as description, creation date, language, pages', async () => {
    const r = await post({ url: fx.url('/meta.pdf') });
    expect(r.status).toBe(200);
    expect(r.body.title).not.toBe('');
    expect(r.body.metadata).toMatchObject({ pages: expect.any(Number) });
    expect(r.body.metadata.author).toEqual(expect.any(String));
    expect(r.body.metadata.description).toEqual(expect.any(String));
    expect(r.body.metadata.published_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('pages: only those asked for, with their own page numbers, and truncated', async () => {
    const r = await post({ url: fx.url('/book.pdf'), pages: '2-3,5' });
    expect(r.status).toBe(200);
    expect(r.body.truncated).toBe(true);
    const marks = [...(r.body.content as string).matchAll(/<!-- page (\d+) -->/g)].map((m) => Number(m[1]));
    expect(marks).toEqual([2, 3, 5]);
    expect(r.body.content).toContain('Chapter 5');
    expect(r.body.content).not.toContain('Chapter 4');
    expect(r.body.metadata.pages).toBe(12);
  });

  it('SIFT_PDF_MAX_PAGES cuts a longer document, and says so', async () => {
    const r = await post({ url: fx.url('/book.pdf') });
    expect(r.status).toBe(200);
    expect(r.body.truncated).toBe(true);
    expect(r.body.content).toContain('Chapter 10');
    expect(r.body.content).not.toContain('Chapter 11');
  });

  it.each([
    ['0', '0'],
    ['5-2', '5-2'],
    ['abc', 'abc'],
    ['empty', ''],
    ['101 ranges', Array.from({ length: 101 }, (_, i) => i + 1).join(',')],
  ])('pages %s is 400 invalid_request naming the field', async (_label, pages) => {
    const r = await post({ url: fx.url('/book.pdf'), pages });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_request');
    expect(r.body.error.message).toMatch(/pages/);
  });

  it('a PDF answered 404 is the error page it is, not read, and not a fault', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await post({ url: fx.url('/gone.pdf'), formats: ['markdown', 'text', 'html'] });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: 404, verdict: 'error_page', cached: i === 1 });
      expect(r.body.formats).toEqual({ markdown: '', text: '', html: '' });
    }
  });

  it('pages the document does not have: empty, and the hint says how many it has', async () => {
    const r = await post({ url: fx.url('/book.pdf'), pages: '50-60' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ verdict: 'empty', truncated: true, content: '' });
    expect(r.body.verdict_hint).toBe('the document has 12 page(s); none of pages "50-60" is among them');
  });

  it('a scan with no text layer and no image large enough for OCR: verdict empty, with the hint', async () => {
    const r = await post({ url: fx.url('/scan.pdf') });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      verdict: 'empty',
      verdict_hint: 'no text layer, and no image large enough for OCR',
    });
  });

  it('an encrypted document is 502 unsupported_document with a hint', async () => {
    const r = await post({ url: fx.url('/locked.pdf') });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('unsupported_document');
    expect(r.body.error.hint).toEqual(expect.any(String));
  });

  it('a deflate bomb is 502 document_too_complex, and sift answers meanwhile', async () => {
    const started = Date.now();
    let answered = false;
    const during = post({ url: fx.url('/bomb.pdf') }).then((r) => {
      answered = true;
      return r;
    });
    // A health check every 100 ms, from the request until its answer.
    const health: number[] = [];
    await waitUntil(
      async () => {
        const t = Date.now();
        expect((await request(app.getHttpServer()).get('/healthz')).status).toBe(200);
        health.push(Date.now() - t);
        return answered ? true : undefined;
      },
      'the answer for the deflate bomb',
      30_000,
      100,
    );
    const r = await during;
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('document_too_complex');
    expect(Date.now() - started).toBeLessThan(30_000);
    // A health check is not held up by the parse (a generous bound: the machine may be busy).
    expect(Math.max(...health)).toBeLessThan(1000);
    // And the next document is read as ever.
    expect((await post({ url: fx.url('/report.pdf'), max_age_s: 0 })).status).toBe(200);
  }, 60_000);

  it('a PDF has the cap SIFT_PDF_MAX_BYTES, by its type or its first bytes; other bytes the page cap', async () => {
    const code = async (path: string) =>
      ((await post({ url: fx.url(path) })).body as { error: { code: string } }).error.code;
    // Over the page cap, under the document cap: read (and found broken), not refused.
    expect(await code('/12mb.pdf')).toBe('unsupported_document');
    expect(await code('/12mb-opaque')).toBe('unsupported_document');
    expect(await code('/17mb.pdf')).toBe('too_large');
    expect(await code('/17mb-opaque')).toBe('too_large');
    expect(await code('/12mb.bin')).toBe('too_large');
    expect(await code('/image.gif')).toBe('unsupported_content_type');
  });

  it('a PDF link inside a batch is read like any page; a bad one fails alone', async () => {
    const res = await request(app.getHttpServer())
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: ['/report.pdf', '/locked.pdf', '/book.pdf'].map((p) => ({ url: fx.url(p) })),
        options: { pages: '1' },
      });
    expect(res.status).toBe(202);
    await waitForJob(app, res.body.id);
    const results = await request(app.getHttpServer()).get(`/v1/batch/${res.body.id}/results`).set(fleet);
    const items = results.body.results as {
      status: string;
      result?: { content: string };
      error?: { code: string };
    }[];
    expect(items.map((i) => i.status)).toEqual(['done', 'failed', 'done']);
    expect(items[0].result!.content).toContain('reviewed every proposal');
    expect(items[1].error!.code).toBe('unsupported_document');
    expect(items[2].result!.content).toContain('Chapter 1');
    expect(items[2].result!.content).not.toContain('Chapter 2');
  });
});

describe('PDF documents under the default caps', () => {
  let app: INestApplication;
  let fx: Fixture;

  beforeAll(async () => {
    fx = new Fixture({
      '/30mb.pdf': send(200, 'application/pdf', broken(30)),
      '/50mb.pdf': send(200, 'application/pdf', broken(50)),
    });
    await fx.start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.1/32' }));
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await fx?.stop();
  });

  it('a 50 MB file is too_large at 32 MiB; a 30 MB one is read', async () => {
    const post = (path: string) =>
      request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url(path) });
    const big = await post('/50mb.pdf');
    expect(big.status).toBe(502);
    expect(big.body.error.code).toBe('too_large');
    expect(big.body.error.message).toContain(String(32 << 20));
    // Read, and found to be no PDF at all past its first line.
    expect((await post('/30mb.pdf')).body.error.code).toBe('unsupported_document');
  }, 60_000);
});
