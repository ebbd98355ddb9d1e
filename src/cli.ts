#!/usr/bin/env node
import './tuning/threadpool';
import './tuning/lazy-intl';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { callerClassClash, fingerprint } from './api/authenticator';
import { ConfigError, databaseName, loadConfig } from './config/app-config';
import { openDcacheFor } from './dcache';

const USAGE = `usage: sift <command>

server:
  serve                                  start sift (configuration from the environment)
  migrate                                create or update the database (SIFT_DATABASE_URL, else SIFT_DB)
  token create CALLER --class fleet|restricted
                                         create a token; it is printed once, only its fingerprint is kept

client (SIFT_URL, default http://127.0.0.1:8080, and SIFT_TOKEN):
  fetch URL [--format markdown|text|html]
  batch FILE|- [--format F] [--wait] [--out FILE] [--ttl SECONDS] [--ignore-invalid-urls]
        [--webhook URL [--webhook-events TYPE,...]]
                                         URLs one a line; --wait shows progress and writes NDJSON results;
                                         --webhook signs with SIFT_WEBHOOK_SECRET (see webhook-secret)
  retry ID [--wait] [--out FILE]         a new job of the failed targets of job ID
  jobs                                   your jobs, newest first
  cancel ID
  purge ID                               delete an ended job with its results, events and deliveries
  deliveries ID                          the job's webhook deliveries
  redeliver ID [--all]                   send the job's undelivered deliveries again (--all: every one)
  webhook-secret                         print a new webhook secret (whsec_…)
`;

class CliError extends Error {}

function fail(message: string): never {
  throw new CliError(message);
}

function config() {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
}

async function migrate(): Promise<void> {
  const cfg = config();
  const d = await openDcacheFor(cfg, (m) => console.error(`sift: ${m}`));
  await d.close();
  console.log(`database ${databaseName(cfg)} is up to date`);
}

async function tokenCreate(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    options: { class: { type: 'string' } },
    allowPositionals: true,
  });
  const caller = positionals[0];
  if (!caller || !/^[\w.@-]{1,64}$/.test(caller))
    fail('token create needs a CALLER name (letters, digits, . _ @ -)');
  const cls = values.class;
  if (cls !== 'fleet' && cls !== 'restricted') fail('token create needs --class fleet or --class restricted');
  const cfg = config();
  const token = `sift_${randomBytes(24).toString('base64url')}`;
  const d = await openDcacheFor(cfg, (m) => console.error(`sift: ${m}`));
  try {
    const clash = callerClassClash(cfg.tokens, [
      ...(await d.clients.clients()),
      { caller, callerClass: cls },
    ]);
    if (clash) fail(`token create refused: ${clash}; pick another CALLER name`);
    await d.clients.addClient({
      fingerprint: fingerprint(token),
      caller,
      callerClass: cls,
      createdAt: Math.floor(Date.now() / 1000),
    });
  } finally {
    await d.close();
  }
  console.error(`created a ${cls} token for ${caller}; it is shown once:`);
  console.log(token);
}

interface Api {
  base: string;
  headers: Record<string, string>;
}

function api(): Api {
  const base = (process.env.SIFT_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const token = process.env.SIFT_TOKEN;
  if (!token) fail('set SIFT_TOKEN to your token (and SIFT_URL when sift is not on 127.0.0.1:8080)');
  return { base, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
}

async function call(
  a: Api,
  method: string,
  path: string,
  body?: unknown,
  accept = 'application/json',
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${a.base}${path}`, {
      method,
      headers: { ...a.headers, accept },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    fail(
      `cannot reach sift at ${a.base}: ${((err as Error).cause as Error)?.message ?? (err as Error).message}`,
    );
  }
  if (res.status >= 400) {
    const text = await res.text();
    let e: { code?: string; message?: string; hint?: string } = {};
    try {
      e = (JSON.parse(text) as { error: typeof e }).error ?? {};
    } catch {
      e = { message: text.slice(0, 200) };
    }
    fail(`${e.code ?? res.status}: ${e.message ?? res.statusText}${e.hint ? `\nhint: ${e.hint}` : ''}`);
  }
  return res;
}

async function fetchCmd(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    options: { format: { type: 'string' } },
    allowPositionals: true,
  });
  if (!positionals[0]) fail('fetch needs a URL');
  const a = api();
  const res = await call(a, 'POST', '/v1/fetch', {
    url: positionals[0],
    ...(values.format ? { format: values.format } : {}),
  });
  const env = (await res.json()) as { content: string; title: string; status: number; truncated: boolean };
  if (env.title) console.error(`# ${env.title} (HTTP ${env.status}${env.truncated ? ', truncated' : ''})`);
  process.stdout.write(`${env.content}\n`);
}

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

async function batchCmd(args: string[]): Promise<void> {
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
    targets: urls.map((url) => ({ url })),
    ...(values.format ? { options: { format: values.format } } : {}),
    ...(values.ttl !== undefined ? { ttl_s: Number(values.ttl) } : {}),
    ...(values['ignore-invalid-urls'] ? { ignore_invalid_urls: true } : {}),
    ...(webhook ? { webhook } : {}),
  });
  await follow(a, (await res.json()) as SubmittedJob, values);
}

async function retryCmd(args: string[]): Promise<void> {
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
  const stream = await call(a, 'GET', `/v1/batch/${job.id}/events`, undefined, 'text/event-stream');
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
  const results = await call(a, 'GET', `/v1/batch/${job.id}/results`, undefined, 'application/x-ndjson');
  const out: NodeJS.WritableStream = values.out ? fs.createWriteStream(values.out) : process.stdout;
  for await (const chunk of results.body as unknown as AsyncIterable<Uint8Array>) {
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  if (values.out) await new Promise<void>((r) => out.end(() => r()));
  if (status !== 'done') process.exitCode = 3;
}

async function jobsCmd(): Promise<void> {
  const a = api();
  const { jobs } = (await (await call(a, 'GET', '/v1/batch?limit=100')).json()) as {
    jobs: { id: string; status: string; targets_done: number; targets_total: number; created_at: string }[];
  };
  for (const j of jobs)
    console.log(`${j.id}  ${j.status.padEnd(9)} ${j.targets_done}/${j.targets_total}  ${j.created_at}`);
}

async function cancelCmd(args: string[]): Promise<void> {
  if (!args[0]) fail('cancel needs a job ID');
  const j = (await (await call(api(), 'DELETE', `/v1/batch/${encodeURIComponent(args[0])}`)).json()) as {
    status: string;
  };
  console.log(`${args[0]} ${j.status}`);
}

async function purgeCmd(args: string[]): Promise<void> {
  if (!args[0]) fail('purge needs a job ID');
  await call(api(), 'DELETE', `/v1/batch/${encodeURIComponent(args[0])}?purge=true`);
  console.log(`${args[0]} purged`);
}

async function deliveriesCmd(args: string[]): Promise<void> {
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

async function redeliverCmd(args: string[]): Promise<void> {
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
    {
      all: values.all ?? false,
    },
  );
  console.log(`${((await res.json()) as { queued: number }).queued} deliveries queued`);
}

export async function run(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'serve':
      return (await import('./main')).serve();
    case 'migrate':
      return migrate();
    case 'token':
      if (rest[0] !== 'create') fail('usage: sift token create CALLER --class fleet|restricted');
      return tokenCreate(rest.slice(1));
    case 'fetch':
      return fetchCmd(rest);
    case 'batch':
      return batchCmd(rest);
    case 'jobs':
      return jobsCmd();
    case 'cancel':
      return cancelCmd(rest);
    case 'retry':
      return retryCmd(rest);
    case 'purge':
      return purgeCmd(rest);
    case 'deliveries':
      return deliveriesCmd(rest);
    case 'redeliver':
      return redeliverCmd(rest);
    case 'webhook-secret':
      console.log(`whsec_${randomBytes(32).toString('base64')}`);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      fail(`unknown command "${cmd}"\n\n${USAGE}`);
  }
}

if (require.main === module) {
  run(process.argv.slice(2)).catch((err: Error) => {
    console.error(`sift: ${err instanceof CliError ? err.message : (err.stack ?? err.message)}`);
    process.exit(err instanceof CliError ? 2 : 1);
  });
}
