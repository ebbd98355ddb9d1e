import * as v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { TYPESCRIPT_SOURCES } from '../tuning/typescript-worker';

// An extraction worker thread: its code, and the limits it starts with. The pool (extract-pool.ts)
// hands it pages and reads its answers.

// The worker loads the extractor itself: compiled JavaScript when sift runs built, or the
// TypeScript source (see TYPESCRIPT_SOURCES) when it runs from sources under the test runner.
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
${TYPESCRIPT_SOURCES}
const x = require(workerData.file);
parentPort.postMessage({ ready: true });
parentPort.on('message', (m) => {
  try {
    const ok = m.article
      ? { title: '', content: '', contents: x.writeArticle(m.html, m.opts.formats) }
      : x.extractHtml(m.html, m.url, m.format, m.opts);
    parentPort.postMessage({ id: m.id, ok });
  } catch (e) {
    if (e && e.code === 'selector_too_costly') parentPort.postMessage({ id: m.id, costly: e.message });
    else parentPort.postMessage({ id: m.id, err: String((e && (e.stack || e.message)) || e) });
  }
});
`;

/** Each extraction worker's young generation (new-space) in MB. */
export const YOUNG_GENERATION_MB = 8;

/**
 * sift is launched with --max-semi-space-size (the main thread's young generation, see the
 * Makefile). V8 reads that flag when it creates a heap, and it overrides a worker's own
 * resourceLimits: cleared before workers start, each gets YOUNG_GENERATION_MB. Heaps that exist
 * (the main thread's) keep theirs.
 */
export function clearLaunchYoungGeneration(): void {
  v8.setFlagsFromString('--max-semi-space-size=0');
}

/** A worker that loads `module` (its extractHtml and writeArticle) and posts `{ ready }` once it has. */
export function startWorker(module: string, heapMb: number): Worker {
  return new Worker(WORKER_CODE, {
    eval: true,
    workerData: { file: module },
    // A DOM per page is short-lived garbage: with a 4 MB young generation, scavenges took about a
    // third of each worker's time; at 8 MB their cost is lost in the noise, and 16 MB added about
    // 10 MB of resident memory per worker for nothing measurable.
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
}
