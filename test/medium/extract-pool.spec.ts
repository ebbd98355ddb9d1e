import * as path from 'node:path';
import { ExtractPool } from '../../src/fetch/extract-pool';

describe('ExtractPool', () => {
  it('extracts in worker threads, as inline extraction does', async () => {
    const pool = new ExtractPool({ size: 2 });
    const inline = new ExtractPool({ size: 0 });
    const html =
      '<html><head><title>T</title></head><body><article><p>Words in a paragraph, enough of them to count as text.</p></article></body></html>';
    const [a, b] = await Promise.all([
      pool.extract(html, 'http://x.test/', 'text'),
      inline.extract(html, 'http://x.test/', 'text'),
    ]);
    expect(a).toEqual(b);
    expect(a.title).toBe('T');
    await pool.close();
  });

  it('a page that overruns the time limit fails alone with timeout, and the pool goes on', async () => {
    const pool = new ExtractPool({ size: 1, timeoutMs: 1500 });
    expect((await pool.extract('<p>warm</p>', 'http://x.test/', 'text')).content).toContain('warm');
    const big = `<html><body>${'<p>word word word, word.</p>'.repeat(300_000)}</body></html>`;
    await expect(pool.extract(big, 'http://x.test/', 'markdown')).rejects.toMatchObject({ code: 'timeout' });
    // The worker was replaced: the next page extracts normally.
    const ok = await pool.extract('<html><body><p>after</p></body></html>', 'http://x.test/', 'text');
    expect(ok.content).toContain('after');
    await pool.close();
  });

  it('each worker runs with an 8 MB young generation and the configured heap limit', async () => {
    // bench/batch: 16 MB cost about 10 MB of resident memory per worker and no measurable time.
    const module = path.join(__dirname, '..', 'fixtures', 'limits-extract.ts');
    const pool = new ExtractPool({ size: 1, heapMb: 100, module });
    const limits = JSON.parse((await pool.extract('<p>x</p>', 'http://x.test/', 'text')).content);
    expect(limits).toMatchObject({ maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 100 });
    await pool.close();
  });
});
