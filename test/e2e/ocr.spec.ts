import { PDFDocument } from 'pdf-lib';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { createTestApp, fleet } from '../support/app';
import { Fixture, html, send } from '../support/fixture';

/** The words the image shows, large and plain: what Tesseract must read back. */
const WORDS = ['Quarterly', 'harvest', 'report', 'apples', 'pears', 'plums'];

/** A PNG header (signature and IHDR) stating width × height, and nothing after it. */
function pngHeader(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b[24] = 8;
  b[25] = 2;
  return b;
}

/**
 * OCR by Tesseract: an image of text (a screenshot sift's own Chromium takes of a page of large
 * words) read as a document, the same image as a scanned PDF page, and the bounds around them.
 */
describe('OCR of images and scanned pages', () => {
  let app: INestApplication;
  let fx: Fixture;
  let png: Buffer;
  const routes: Record<string, ReturnType<typeof send>> = {};
  const post = (body: Record<string, unknown>) =>
    request(app.getHttpServer()).post('/v1/fetch').set(fleet).send(body);
  const words = (s: string) => WORDS.filter((w) => s.toLowerCase().includes(w.toLowerCase()));

  beforeAll(async () => {
    fx = new Fixture({
      '/words': send(
        200,
        'text/html',
        html(
          `<div style="font: 56px/1.5 'DejaVu Sans', sans-serif; color: #000; background: #fff; padding: 40px">` +
            `<p>${WORDS.slice(0, 3).join(' ')}</p><p>${WORDS.slice(3).join(' ')}</p></div>`,
        ),
      ),
      '/*': (req, res) => {
        const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
        if (route) route(req, res);
        else res.writeHead(404).end();
      },
    });
    await fx.start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.1/32', SIFT_OCR_LANGS: 'eng' }));
    const shot = await post({ url: fx.url('/words'), render: 'always', screenshot: true, format: 'text' });
    expect(shot.status).toBe(200);
    png = Buffer.from(shot.body.screenshot.data, 'base64');
    const doc = await PDFDocument.create();
    const image = await doc.embedPng(png);
    const page = doc.addPage([image.width / 2, image.height / 2]);
    page.drawImage(image, { x: 0, y: 0, width: image.width / 2, height: image.height / 2 });
    const scan = Buffer.from(await doc.save());
    Object.assign(routes, {
      '/words.png': send(200, 'image/png', png),
      '/download': send(200, 'application/octet-stream', png),
      '/scan.pdf': send(200, 'application/pdf', scan),
      '/huge.png': send(200, 'image/png', pngHeader(50_000, 50_000)),
      '/broken.png': send(200, 'image/png', Buffer.concat([pngHeader(400, 300), Buffer.alloc(100, 7)])),
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await fx?.stop();
  });

  it('an image is read by OCR: its words, metadata.ocr, by its type or by its bytes', async () => {
    for (const path of ['/words.png', '/download']) {
      const r = await post({ url: fx.url(path), format: 'text' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ verdict: 'ok', metadata: { ocr: true, pages: 1 } });
      expect(words(r.body.content)).toEqual(WORDS);
    }
  }, 60_000);

  it('a scanned PDF page gets its text, not verdict empty; ocr "never" leaves it unread', async () => {
    const r = await post({ url: fx.url('/scan.pdf'), format: 'markdown' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ verdict: 'ok', metadata: { ocr: true, pages: 1 } });
    expect(r.body.content).toContain('<!-- page 1 -->');
    expect(words(r.body.content)).toEqual(WORDS);
    const never = await post({ url: fx.url('/scan.pdf'), ocr: 'never', format: 'text' });
    expect(never.body).toMatchObject({
      verdict: 'empty',
      verdict_hint: 'no text layer (ocr "never" leaves scans unread)',
    });
    expect(never.body.metadata.ocr).toBeUndefined();
    const image = await post({ url: fx.url('/words.png'), ocr: 'never' });
    expect(image.body).toMatchObject({ verdict: 'empty', content: '' });
  }, 60_000);

  it('an image stating more pixels than OCR reads is refused before decoding; a broken one is unreadable', async () => {
    const huge = await post({ url: fx.url('/huge.png') });
    expect([huge.status, huge.body.error.code]).toEqual([502, 'document_too_complex']);
    expect(huge.body.error.message).toMatch(/50000×50000 pixels/);
    const broken = await post({ url: fx.url('/broken.png') });
    expect([broken.status, broken.body.error.code]).toEqual([502, 'unsupported_document']);
    expect(broken.body.error.message).toMatch(/OCR failed/);
  }, 60_000);

  it('POST /v1/parse reads an image sent', async () => {
    const r = await request(app.getHttpServer())
      .post('/v1/parse')
      .set(fleet)
      .attach('file', png, { filename: 'words.png', contentType: 'image/png' });
    expect(r.status).toBe(200);
    expect(r.body.metadata.ocr).toBe(true);
    expect(words(r.body.content)).toEqual(WORDS);
  }, 60_000);

  it('SIFT_OCR_LANGS names the languages: one Tesseract lacks fails the image, naming it', async () => {
    const { app: other } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.1/32',
      SIFT_OCR_LANGS: 'xyz',
    });
    try {
      const r = await request(other.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/words.png'), max_age_s: 0 });
      expect([r.status, r.body.error.code]).toEqual([502, 'unsupported_document']);
      expect(r.body.error.message).toMatch(/no data for the language "xyz".*tesseract-ocr-xyz/);
      // A scan's page: empty, and the hint says why OCR read nothing (not that it found nothing).
      const s = await request(other.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/scan.pdf'), max_age_s: 0 });
      expect([s.status, s.body.verdict, s.body.metadata.ocr]).toEqual([200, 'empty', undefined]);
      expect(s.body.verdict_hint).toMatch(
        /^no text layer, and OCR could not read its images: OCR has no data for the language "xyz"/,
      );
    } finally {
      await other.close();
    }
  }, 60_000);
});
