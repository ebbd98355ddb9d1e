// `sift llmstxt URL`: a job that reads the site and writes its llms.txt and llms-full.txt.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { int, parse } from './args';
import { api, call, getJson, jobPath, usage } from './client';
import { post, scopeOf, SCOPE_FLAGS } from './crawl';
import { FETCH_FLAGS, fetchOptions } from './fetch-options';
import { followJob, Interrupt, isEnded } from './follow';
import type { JobView } from './job-notes';
import { idemHeader } from './jobs';

const filesPath = (id: string, file: string) => `/v1/llmstxt/${encodeURIComponent(id)}/${file}`;

/**
 * Submits the job (or takes `--job ID`'s), follows it to its end with its progress on stderr,
 * then writes llms.txt to stdout (`--full`: llms-full.txt), or both files into `--out DIR`.
 */
export async function llmstxtCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('llmstxt', args, {
    ...FETCH_FLAGS,
    ...SCOPE_FLAGS,
    'max-depth': { type: 'string' },
    job: { type: 'string' },
    full: { type: 'boolean' },
    out: { type: 'string' },
    ttl: { type: 'string' },
    'idempotency-key': { type: 'string' },
  });
  const url = positionals[0];
  if (!url && !values.job)
    usage('llmstxt needs a URL to start from: sift llmstxt URL [options]; see sift help');
  if (url && values.job) usage('give a URL or --job ID, not both');
  if (values.full && values.out !== undefined) usage('--out writes both files; --full is for stdout');
  const a = api();
  let job: JobView;
  if (values.job) {
    job = await getJson<JobView>(a, jobPath(values.job));
  } else {
    const options = fetchOptions(values);
    const maxDepth = int('max-depth', values['max-depth']);
    const ttl = int('ttl', values.ttl);
    const res = await post(
      '/v1/llmstxt',
      {
        ...scopeOf(url, values),
        ...(maxDepth !== undefined ? { max_depth: maxDepth } : {}),
        ...(Object.keys(options).length > 0 ? { options } : {}),
        ...(ttl !== undefined ? { ttl_s: ttl } : {}),
      },
      idemHeader(values['idempotency-key']),
    );
    job = await res.json<JobView>();
    console.error(`job ${job.id}: llms.txt of ${url}`);
  }
  if (!isEnded(job.status)) {
    await followJob(job, undefined, new Interrupt(), a);
    job = await getJson<JobView>(a, jobPath(job.id));
    // Interrupted, or the server went away: what to do next was said.
    if (!isEnded(job.status)) return;
  }
  const file = async (name: string) =>
    (await call(a, 'GET', filesPath(job.id, name), { accept: 'text/plain' })).text();
  if (values.out === undefined) {
    process.stdout.write(await file(values.full ? 'llms-full.txt' : 'llms.txt'));
    return;
  }
  mkdirSync(values.out, { recursive: true });
  for (const name of ['llms.txt', 'llms-full.txt']) {
    const text = await file(name);
    writeFileSync(join(values.out, name), text);
    console.error(`wrote ${join(values.out, name)} (${Buffer.byteLength(text)} bytes)`);
  }
}
