import { int, parse } from './args';
import { api, call, usage } from './client';
import type { SearchHit } from '../dcache';

/**
 * `sift search WORDS... [--jobs ID,...] [--site HOST] [--limit N] [--json]`: the pages your jobs
 * fetched that have every word, best first, a block each: its URL; its title, job and idx; its
 * snippet. --json: the whole answer.
 */
export async function searchCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse(
    'search',
    args,
    {
      jobs: { type: 'string' },
      site: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
    Infinity,
  );
  const query = positionals.join(' ').trim();
  if (!query) usage('search needs words: sift search WORDS... [--site HOST] [--jobs ID,...]; see sift help');
  const body = {
    query,
    ...(values.jobs ? { jobs: values.jobs.split(',').map((j) => j.trim()) } : {}),
    ...(values.site ? { site: values.site } : {}),
    ...(values.limit ? { limit: int('limit', values.limit, 1) } : {}),
  };
  const text = await (await call(api(), 'POST', '/v1/search', { body })).text();
  if (values.json) {
    process.stdout.write(`${text}\n`);
    return;
  }
  const { hits } = JSON.parse(text) as { hits: SearchHit[] };
  console.error(`# ${hits.length} ${hits.length === 1 ? 'page' : 'pages'}, best first`);
  for (const h of hits) {
    const where = h.job_id ? `  (job ${h.job_id}, idx ${h.idx})` : '';
    process.stdout.write(`${h.url}\n  ${h.title}${where}\n  ${h.snippet}\n\n`);
  }
}
