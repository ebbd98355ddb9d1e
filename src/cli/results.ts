// `sift results ID` and `sift watch ID`: a job's results as NDJSON, and a live job followed to its end.
import { parse } from './args';
import { api, getJson, jobPath, Unreachable, usage } from './client';
import { followJob, Interrupt, isEnded, writeEnded } from './follow';
import { ended, interrupted, stopped, type JobView } from './job-notes';
import { ResultsOut, writeResults } from './results-out';

export async function resultsCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('results', args, {
    out: { type: 'string' },
    verdict: { type: 'string' },
    status: { type: 'string' },
  });
  const id = positionals[0];
  if (!id) usage('results needs a job ID: sift results ID [--out FILE] [--verdict V]');
  const a = api();
  const out = new ResultsOut(values.out);
  const job = await getJson<JobView>(a, jobPath(id));
  const stop = new Interrupt();
  let r;
  try {
    // Rows of targets not finished yet carry nothing; they are left out unless a status is asked for.
    r = await writeResults(a, id, out, { ...values, finishedOnly: !values.status }, stop.signal);
  } catch (err) {
    if (err instanceof Unreachable) return stopped(job, out, err, false);
    throw err;
  } finally {
    out.close();
  }
  if (!r.complete) return interrupted(job, out, !isEnded(job.status));
  if (values.out)
    console.error(
      out.written > 0
        ? `wrote ${out.written} results of job ${id} (${job.status}) to ${values.out}`
        : `job ${id} (${job.status}) has no results to write; nothing written to ${values.out}`,
    );
  if (r.unfinished > 0)
    console.error(
      `sift: job ${id} is ${job.status}: ${r.unfinished} targets have no result yet; sift watch ${id}${out.flag} waits for them`,
    );
}

export async function watchCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('watch', args, { out: { type: 'string' } });
  const id = positionals[0];
  if (!id) usage('watch needs a job ID: sift watch ID [--out FILE]');
  const a = api();
  const out = values.out !== undefined ? new ResultsOut(values.out) : undefined;
  const job = await getJson<JobView>(a, jobPath(id));
  const stop = new Interrupt();
  if (!isEnded(job.status)) {
    console.error(`job ${id} ${job.status}: ${job.targets_done}/${job.targets_total} finished`);
    return followJob(job, out, stop, a);
  }
  ended(job);
  if (!out) return;
  try {
    await writeEnded(a, job, out, stop.signal);
  } finally {
    out.close();
  }
}
