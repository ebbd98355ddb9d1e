// The client's commands for batch jobs: submit, retry, list, cancel, purge, and webhook deliveries.
// Following a job to its end is in follow.ts.
import { int, parse } from './args';
import { api, ApiError, call, getJson, jobPath, usage, type Reply } from './client';
import { FETCH_FLAGS, fetchOptions } from './fetch-options';
import { followJob, Interrupt } from './follow';
import type { JobView } from './job-notes';
import { ResultsOut } from './results-out';
import { inFileTerms, readUrlFile } from './url-file';

export const WAIT_FLAGS = {
  wait: { type: 'boolean' },
  out: { type: 'string' },
  'idempotency-key': { type: 'string' },
} as const;

/**
 * Prints the new job's id; with --wait, follows it to its end and writes its results. `what` says
 * what the job is (by default its number of targets).
 */
export async function submitted(
  res: Reply,
  values: { wait?: boolean; out?: string },
  what: (job: JobView) => string = (job) => `${job.targets_total} targets`,
): Promise<void> {
  const job = (await res.json()) as JobView;
  const replayed = res.header('idempotent-replayed') === 'true' ? ' (the job this key already made)' : '';
  const stop = values.wait ? new Interrupt() : undefined;
  console.error(`job ${job.id}: ${what(job)}${replayed}`);
  if (!stop) {
    console.log(job.id);
    return;
  }
  return followJob(job, new ResultsOut(values.out), stop);
}

export const idemHeader = (key: string | undefined): Record<string, string> =>
  key === undefined ? {} : { 'idempotency-key': key };

/** The webhook of --webhook and --webhook-events, signed with SIFT_WEBHOOK_SECRET. */
export function webhookOf(values: { webhook?: string; 'webhook-events'?: string }): object | undefined {
  if (!values.webhook) {
    if (values['webhook-events']) usage('--webhook-events needs --webhook URL');
    return undefined;
  }
  // From the environment, not the command line, where every process could read it.
  const secret = process.env.SIFT_WEBHOOK_SECRET;
  if (!secret) usage('--webhook needs SIFT_WEBHOOK_SECRET (make one with: sift webhook-secret)');
  return {
    url: values.webhook,
    secret,
    ...(values['webhook-events'] ? { events: values['webhook-events'].split(',') } : {}),
  };
}

export async function batchCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('batch', args, {
    ...WAIT_FLAGS,
    ...FETCH_FLAGS,
    ttl: { type: 'string' },
    'on-restart': { type: 'string' },
    'ignore-invalid-urls': { type: 'boolean' },
    webhook: { type: 'string' },
    'webhook-events': { type: 'string' },
  });
  if (!positionals[0]) usage('batch needs a FILE of URLs, one a line (or - for standard input)');
  if (values.out !== undefined && !values.wait)
    usage('--out needs --wait (or use: sift results ID --out FILE)');
  const options = fetchOptions(values);
  const ttl = int('ttl', values.ttl);
  const webhook = webhookOf(values);
  const file = readUrlFile(positionals[0]);
  let res: Reply;
  try {
    res = await call(api(), 'POST', '/v1/batch', {
      headers: idemHeader(values['idempotency-key']),
      body: {
        targets: file.urls.map((url) => ({ url })),
        ...(Object.keys(options).length > 0 ? { options } : {}),
        ...(ttl !== undefined ? { ttl_s: ttl } : {}),
        ...(values['on-restart'] ? { on_restart: values['on-restart'] } : {}),
        ...(values['ignore-invalid-urls'] ? { ignore_invalid_urls: true } : {}),
        ...(webhook ? { webhook } : {}),
      },
    });
  } catch (err) {
    throw err instanceof ApiError ? inFileTerms(err, file) : err;
  }
  await submitted(res, values);
}

export async function retryCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('retry', args, WAIT_FLAGS);
  if (!positionals[0]) usage('retry needs a job ID');
  if (values.out !== undefined && !values.wait)
    usage('--out needs --wait (or use: sift results ID --out FILE)');
  const res = await call(api(), 'POST', `${jobPath(positionals[0])}/retry`, {
    headers: idemHeader(values['idempotency-key']),
  });
  await submitted(res, values);
}

interface JobLine {
  id: string;
  status: string;
  /** Why the job failed, such as server_restarted; null when none. */
  error?: string | null;
  targets_done: number;
  targets_total: number;
  created_at: string;
}

export async function jobsCmd(args: string[]): Promise<void> {
  const { values } = parse('jobs', args, { limit: { type: 'string' }, status: { type: 'string' } }, 0);
  const limit = int('limit', values.limit, 1) ?? 20;
  const a = api();
  let shown = 0;
  let next: string | null = null;
  do {
    // The API gives at most 100 a page; `next` is passed back as `after`.
    const params = new URLSearchParams({ limit: String(Math.min(100, limit - shown)) });
    if (values.status) params.set('status', values.status);
    if (next !== null) params.set('after', next);
    const page: { jobs: JobLine[]; next: string | null } = await getJson(a, `/v1/batch?${params}`);
    for (const j of page.jobs)
      console.log(
        `${j.id}  ${j.status.padEnd(9)} ${j.targets_done}/${j.targets_total}  ${j.created_at}${j.error ? `  ${j.error}` : ''}`,
      );
    shown += page.jobs.length;
    next = page.next ?? null;
  } while (next !== null && shown < limit);
  if (next !== null) console.error(`sift: ${shown} jobs shown, more with --limit`);
}

/** The one positional a command of a job takes, and no flags but those given. */
function jobId<O extends Parameters<typeof parse>[2]>(cmd: string, args: string[], options: O) {
  const parsed = parse(cmd, args, options);
  if (!parsed.positionals[0]) usage(`${cmd} needs a job ID`);
  return { id: parsed.positionals[0], values: parsed.values };
}

export async function cancelCmd(args: string[]): Promise<void> {
  const { id } = jobId('cancel', args, {});
  const j = (await (await call(api(), 'DELETE', jobPath(id))).json()) as { status: string };
  console.log(`${id} ${j.status}`);
}

export async function purgeCmd(args: string[]): Promise<void> {
  const { id } = jobId('purge', args, {});
  await call(api(), 'DELETE', `${jobPath(id)}?purge=true`);
  console.log(`${id} purged`);
}

interface DeliveriesPage {
  webhook: { url: string; events: string[] } | null;
  deliveries: {
    seq: number;
    type: string;
    state: string;
    attempts: number;
    last_status: number | null;
    last_error: { code: string; message: string } | null;
    next_attempt_at: string | null;
  }[];
  next: number | null;
}

export async function deliveriesCmd(args: string[]): Promise<void> {
  const { id } = jobId('deliveries', args, {});
  const a = api();
  let page = await getJson<DeliveriesPage>(a, `${jobPath(id)}/deliveries`);
  if (!page.webhook) {
    console.log(`${id} has no webhook`);
    return;
  }
  console.log(`webhook ${page.webhook.url} (${page.webhook.events.join(', ')})`);
  for (;;) {
    for (const d of page.deliveries) {
      const last = d.last_error ? `${d.last_error.code}: ${d.last_error.message}` : (d.last_status ?? '');
      const next = d.next_attempt_at ? `  next ${d.next_attempt_at}` : '';
      console.log(
        `${String(d.seq).padStart(5)}  ${d.type.padEnd(15)} ${d.state.padEnd(9)} ${d.attempts}×  ${last}${next}`,
      );
    }
    if (page.next === null || page.next === undefined) return;
    page = await getJson<DeliveriesPage>(a, `${jobPath(id)}/deliveries?after=${page.next}`);
  }
}

export async function redeliverCmd(args: string[]): Promise<void> {
  const { id, values } = jobId('redeliver', args, { all: { type: 'boolean' } });
  const res = await call(api(), 'POST', `${jobPath(id)}/deliveries/redeliver`, {
    body: { all: values.all ?? false },
  });
  console.log(`${((await res.json()) as { queued: number }).queued} deliveries queued`);
}
