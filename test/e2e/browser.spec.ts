import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { FLEET_TOKEN } from '../support/app';
import { Fixture, html, send } from '../support/fixture';
import { CHROMIUM } from '../support/render';
import { kill, ROOT, startSiftProcess, type SiftProcess } from '../support/process';

// make test installs Debian's chromium-headless-shell when it can, and otherwise stops before the tests saying so.

const OUT = path.join(ROOT, 'test-output');

/**
 * Swagger UI in a real Chromium, served by the built server as users get it: authorize with a
 * token, try POST /v1/fetch, see the 200.
 */
describe('Swagger UI in Chromium', () => {
  let sift: SiftProcess;
  let dir: string;
  let fx: Fixture;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    fx = await new Fixture({
      '/hello': send(
        200,
        'text/html',
        html('<article><p>Hello from the fixture page, with words.</p></article>', 'Hello Page'),
      ),
    }).start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-browser-'));
    sift = await startSiftProcess({
      SIFT_DB: path.join(dir, 'sift.db'),
      SIFT_TOKENS: `${FLEET_TOKEN}:fleet-caller:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
    });
    base = sift.url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (sift) await kill(sift, 'SIGTERM');
    await fx?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('authorizes, runs POST /v1/fetch against a fixture page and shows the 200 body', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/docs`);
    await page.click('button.authorize');
    await page.fill('.auth-container input', FLEET_TOKEN);
    await page.click('.auth-btn-wrapper button.authorize');
    await page.click('.auth-btn-wrapper button.btn-done');
    await page.click('#operations-fetch-fetch .opblock-summary');
    const tryOut = page.locator('#operations-fetch-fetch .try-out__btn');
    await tryOut.waitFor();
    // /docs opens operations ready to try (tryItOutEnabled); the button then reads "Cancel".
    if ((await tryOut.textContent())?.includes('Try it out')) await tryOut.click();
    await page.fill(
      '#operations-fetch-fetch textarea.body-param__text',
      JSON.stringify({ url: fx.url('/hello'), format: 'text' }),
    );
    await page.click('#operations-fetch-fetch button.execute');
    const status = page
      .locator('#operations-fetch-fetch .live-responses-table .response .response-col_status')
      .first();
    await status.waitFor({ timeout: 15_000 });
    expect((await status.textContent())?.trim()).toBe('200');
    const body = await page
      .locator('#operations-fetch-fetch .live-responses-table .response-col_description pre')
      .first()
      .textContent();
    expect(body).toContain('Hello from the fixture page');
    expect(body).toContain('"title": "Hello Page"');
    fs.mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'swagger-fetch.png'), fullPage: true });
    expect(fs.statSync(path.join(OUT, 'swagger-fetch.png')).size).toBeGreaterThan(10_000);
  }, 60_000);
});
