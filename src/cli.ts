#!/usr/bin/env node
import './tuning/threadpool';
import './tuning/lazy-intl';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { migrate, tokenCreate } from './cli/admin';
import { loadEnvFile } from './cli/env-file';
import { api, call, CliError, fail } from './cli/client';
import { batchCmd, cancelCmd, deliveriesCmd, jobsCmd, purgeCmd, redeliverCmd, retryCmd } from './cli/jobs';

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

async function fetchCmd(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    options: { format: { type: 'string' } },
    allowPositionals: true,
  });
  if (!positionals[0]) fail('fetch needs a URL');
  const a = api();
  const res = await call(a, 'POST', '/v1/fetch', {
    body: {
      url: positionals[0],
      ...(values.format ? { format: values.format } : {}),
    },
  });
  const env = (await res.json()) as { content: string; title: string; status: number; truncated: boolean };
  if (env.title) console.error(`# ${env.title} (HTTP ${env.status}${env.truncated ? ', truncated' : ''})`);
  process.stdout.write(`${env.content}\n`);
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
  loadEnvFile();
  run(process.argv.slice(2)).catch((err: Error) => {
    console.error(`sift: ${err instanceof CliError ? err.message : (err.stack ?? err.message)}`);
    process.exit(err instanceof CliError ? 2 : 1);
  });
}
