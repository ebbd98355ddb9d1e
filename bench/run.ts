/** `make bench`: runs the named benchmarks (all when none is named) and prints their numbers. */
import { benchBatch } from './batch';
import { benchFetch } from './fetch';
import { benchLoad } from './load';
import { benchRender } from './render';
import { benchScale } from './scale';
import { benchStore } from './store';

const benches: Record<string, () => Promise<Record<string, number | string>>> = {
  store: benchStore,
  fetch: benchFetch,
  batch: benchBatch,
  load: benchLoad,
  scale: benchScale,
  render: benchRender,
  documents: () => import('./documents').then((m) => m.benchDocuments()),
  office: () => import('./office').then((m) => m.benchOffice()),
  crawl: () => import('./crawl').then((m) => m.benchCrawl()),
  adapters: () => import('./adapters').then((m) => m.benchAdapters()),
  quality: () => import('./quality').then((m) => Promise.resolve(m.benchQuality())),
  cancel: () => import('./cancel').then((m) => m.benchCancel()),
  reach: () => import('./reach').then((m) => m.benchReach()),
  monitor: () => import('./monitor').then((m) => m.benchMonitor()),
  scheduler: () => import('./scheduler').then((m) => m.benchScheduler()),
  tokens: () => import('./tokens').then((m) => m.benchTokens()),
  search: () => import('./search').then((m) => m.benchSearch()),
  builds: () => import('./builds').then((m) => m.benchBuilds()),
};

async function main(): Promise<void> {
  const names = process.argv.slice(2).filter((a) => a in benches);
  for (const name of names.length > 0 ? names : Object.keys(benches)) {
    const started = Date.now();
    const result = await benches[name]();
    console.log(`\n== bench/${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    for (const [k, v] of Object.entries(result)) console.log(`  ${k.padEnd(48)} ${v}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
