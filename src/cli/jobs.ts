// The client's commands for batch jobs: submit, follow (progress, then results as NDJSON),
// retry, list, cancel, purge, and webhook deliveries.
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { api, call, fail, type Api } from './client';

function progress(done: number, total: number, failed: number): void {
  if (!process.stderr.isTTY && done < total) return;
  const width = 30;
  const filled = total > 0 ? Math.round((done / total) * width) : width;
  process.stderr.write(
    `\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total}${failed ? ` (${failed} failed)` : ''}`,
  );
  if (done >= total) process.stderr.write('\n');
}

const WAIT_OPTIONS = { wait: { type: 'boolean' }, out: { type: 'string' } } as const;

export async function batchCmd(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    options: {
      ...WAIT_OPTIONS,
      format: { type: 'string' },
      ttl: { type: 'string' },
      'ignore-invalid-urls': { type: 'boolean' },
      webhook: { type: 'string' },
      'webhook-events': { type: 'string' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (!file) fail('batch needs a FILE of URLs, one a line (or - for standard input)');
  let text: string;
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    fail(`cannot read ${file}: ${(err as Error).message}`);
  }
  const urls = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  if (urls.length === 0) fail(`${file} holds no URLs`);
  let webhook: object | undefined;
  if (values.webhook) {
    // From the environment, not the command line, where every process could read it.
    const secret = process.env.SIFT_WEBHOOK_SECRET;
    if (!secret) fail('--webhook needs SIFT_WEBHOOK_SECRET (make one with: sift webhook-secret)');
    webhook = {
      url: values.webhook,
      secret,
      ...(values['webhook-events'] ? { events: values['webhook-events'].split(',') } : {}),
    };
  }
  if (values.ttl !== undefined && !/^\d+$/.test(values.ttl)) fail('--ttl needs a number of seconds');
  const a = api();
  const res = await call(a, 'POST', '/v1/batch', {
    body: {
      targets: urls.map((url) => ({ url })),
      ...(values.format ? { options: { format: values.format } } : {}),
      ...(values.ttl !== undefined ? { ttl_s: Number(values.ttl) } : {}),
      ...(values['ignore-invalid-urls'] ? { ignore_invalid_urls: true } : {}),
      ...(webhook ? { webhook } : {}),
    },
  });
  await follow(a, (await res.json()) as SubmittedJob, values);
}

export async function retryCmd(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args, options: WAIT_OPTIONS, allowPositionals: true });
  if (!positionals[0]) fail('retry needs a job ID');
  const a = api();
  const res = await call(a, 'POST', `/v1/batch/${encodeURIComponent(positionals[0])}/retry`);
  await follow(a, (await res.json()) as SubmittedJob, values);
}

interface SubmittedJob {
  id: string;
  targets_total: number;
  targets_done: number;
  targets_failed: number;
  status: string;
}

/**
 * Prints the new job's id; with --wait, shows its progress from the live event stream (which ends
 * after the job's last event) and writes its results as NDJSON.
 */
async function follow(a: Api, job: SubmittedJob, values: { wait?: boolean; out?: string }): Promise<void> {
  console.error(`job ${job.id}: ${job.targets_total} targets`);
  if (!values.wait) {
    console.log(job.id);
    return;
  }
  const stream = await call(a, 'GET', `/v1/batch/${job.id}/events`, { accept: 'text/event-stream' });
  let done = 0;
  let failed = 0;
  let status = '';
  let buf = '';
  const decoder = new TextDecoder();
  for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const type = /^event: (.+)$/m.exec(block)?.[1];
      if (type === 'target.done' || type === 'target.failed') {
        done++;
        if (type === 'target.failed') failed++;
        progress(done, job.targets_total, failed);
      } else if (type && /^batch\.(done|partial|failed|cancelled)$/.test(type)) {
        status = type.slice('batch.'.length);
      }
    }
  }
  if (done < job.targets_total) progress(job.targets_total, job.targets_total, failed);
  console.error(`job ${job.id} ${status || 'ended'}`);
  const results = await call(a, 'GET', `/v1/batch/${job.id}/results`, { accept: 'application/x-ndjson' });
  const out: NodeJS.WritableStream = values.out ? fs.createWriteStream(values.out) : process.stdout;
  for await (const chunk of results.body as unknown as AsyncIterable<Uint8Array>) {
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  if (values.out) await new Promise<void>((r) => out.end(() => r()));
  if (status !== 'done') process.exitCode = 3;
}

export async function jobsCmd(): Promise<void> {
  const a = api();
  const { jobs } = (await (await call(a, 'GET', '/v1/batch?limit=100')).json()) as {
    jobs: { id: string; status: string; targets_done: number; targets_total: number; created_at: string }[];
  };
  for (const j of jobs)
    console.log(`${j.id}  ${j.status.padEnd(9)} ${j.targets_done}/${j.targets_total}  ${j.created_at}`);
}

export async function cancelCmd(args: string[]): Promise<void> {
  if (!args[0]) fail('cancel needs a job ID');
  const j = (await (await call(api(), 'DELETE', `/v1/batch/${encodeURIComponent(args[0])}`)).json()) as {
    status: string;
  };
  console.log(`${args[0]} ${j.status}`);
}

export async function purgeCmd(args: string[]): Promise<void> {
  if (!args[0]) fail('purge needs a job ID');
  await call(api(), 'DELETE', `/v1/batch/${encodeURIComponent(args[0])}?purge=true`);
  console.log(`${args[0]} purged`);
}

export async function deliveriesCmd(args: string[]): Promise<void> {
  if (!args[0]) fail('deliveries needs a job ID');
  const body = (await (
    await call(api(), 'GET', `/v1/batch/${encodeURIComponent(args[0])}/deliveries`)
  ).json()) as {
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
  };
  if (!body.webhook) {
    console.log(`${args[0]} has no webhook`);
    return;
  }
  console.log(`webhook ${body.webhook.url} (${body.webhook.events.join(', ')})`);
  for (const d of body.deliveries) {
    const last = d.last_error ? `${d.last_error.code}: ${d.last_error.message}` : (d.last_status ?? '');
    const next = d.next_attempt_at ? `  next ${d.next_attempt_at}` : '';
    console.log(
      `${String(d.seq).padStart(5)}  ${d.type.padEnd(15)} ${d.state.padEnd(9)} ${d.attempts}×  ${last}${next}`,
    );
  }
}

export async function redeliverCmd(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    options: { all: { type: 'boolean' } },
    allowPositionals: true,
  });
  if (!positionals[0]) fail('redeliver needs a job ID');
  const res = await call(
    api(),
    'POST',
    `/v1/batch/${encodeURIComponent(positionals[0])}/deliveries/redeliver`,
    { body: { all: values.all ?? false } },
  );
  console.log(`${((await res.json()) as { queued: number }).queued} deliveries queued`);
}
