#!/usr/bin/env node
import './tuning/threadpool';
import { randomBytes } from 'node:crypto';
import { parse } from './cli/args';
import { CliError, EXIT, usage } from './cli/client';
import { loadEnvFile } from './cli/env-file';
import { FETCH_FLAGS_USAGE } from './cli/fetch-options';

// The client's commands talk to sift over HTTP and load none of the server: the server's commands
// (serve, migrate, token) import it when they run.

const USAGE = `usage: sift <command>

server (configuration from the environment, .env or .env.example as make run reads it):
  serve                                  start sift
  migrate                                create or update the database (SIFT_DATABASE_URL, else SIFT_DB)
  token create CALLER --class fleet|restricted
                                         create a token; it is printed once, only its fingerprint is kept

client (SIFT_TOKEN; sift's address from SIFT_URL, else SIFT_HOST and PORT as the server reads them
(a wildcard bind such as 0.0.0.0 or :: means loopback), else http://127.0.0.1:8080):
  fetch URL [fetch options] [--json]     the page's content on stdout, its title and status on stderr;
                                         --json: the whole envelope
  parse FILE [--format F] [--formats F,...] [--pages 1-5,9] [--ocr MODE] [--json] [other options
        that apply to a file: --max-bytes, --timeout-ms, --tokens, --max-tokens, --chunk-tokens,
        --chunk-overlap, --links, --include-selectors, --exclude-selectors]
                                         a file of this machine (a PDF, an Office, OpenDocument, EPUB,
                                         RTF or CSV file, an image, an html page) read by sift and
                                         printed as fetch prints a page
  batch FILE|- [fetch options] [--wait [--out FILE]] [--ttl SECONDS] [--on-restart fail|retry|resume]
        [--ignore-invalid-urls] [--idempotency-key KEY] [--webhook URL [--webhook-events TYPE,...]]
                                         URLs one a line (blank and # lines skipped); --wait shows
                                         progress (with the rate and time left on a terminal), then
                                         writes the results as NDJSON (to --out or stdout; the file is
                                         created with its first line); --on-restart: what a restart
                                         of sift does to the live job (default fail);
                                         --webhook signs with SIFT_WEBHOOK_SECRET (see webhook-secret)
  crawl URL [--limit N] [--max-depth N] [--include-paths GLOB,...] [--exclude-paths GLOB,...]
        [--allow-subdomains] [--allow-external] [--ignore-query] [--sitemap include|skip|only]
        [--llms-txt include|skip|only] [fetch options] [--wait [--out FILE]] [--ttl SECONDS]
        [--on-restart fail|retry|resume] [--idempotency-key KEY]
        [--webhook URL [--webhook-events TYPE,...]]
                                         a job that reads the site from URL, following its links (on
                                         its host, at most N pages, default 100, and N hops, default
                                         3) and its sitemaps (its llms.txt with --llms-txt include);
                                         results carry depth and parent_idx; read it as a batch
                                         (watch, results, cancel); --wait as for batch
  map URL [--limit N] [--sitemap include|skip|only] [--llms-txt include|skip|only]
        [--include-paths GLOB,...] [--exclude-paths GLOB,...] [--allow-subdomains] [--json]
                                         the site's URLs, one a line (the page's links and its
                                         sitemaps' entries, and its llms.txt's with --llms-txt, each
                                         once), without reading the pages; --json: the whole answer
  llmstxt (URL [--limit N] [--max-depth N] [--include-paths GLOB,...] [--exclude-paths GLOB,...]
        [--allow-subdomains] [--sitemap MODE] [--llms-txt MODE] [fetch options] | --job ID)
        [--full | --out DIR]
                                         a job that reads the site as crawl does, followed to its end;
                                         then its llms.txt to stdout (--full: llms-full.txt, each
                                         page's markdown), or both files into DIR
  retry ID [--wait [--out FILE]] [--idempotency-key KEY]
                                         a new job of the failed and cancelled targets of job ID
  watch ID [--out FILE]                  follow a job's progress until it ends (then its results to FILE)
  results ID [--out FILE] [--verdict V] [--status S,...]
                                         the job's results as NDJSON, every page (targets without a
                                         result yet are left out unless --status asks for them)
  jobs [--limit N] [--status S,...]      your jobs, newest first (at most N, default 20), with a
                                         failed job's error (such as server_restarted)
  cancel ID                              stop a live job; its unstarted targets never run
  purge ID                               delete an ended job with its results, events and deliveries
  deliveries ID                          the job's webhook deliveries
  redeliver ID [--all]                   send the job's undelivered deliveries again (--all: every one)
  monitor add NAME (URL... | --file FILE | --crawl URL [--limit N]) (--every SECONDS | --schedule CRON)
        [fetch options] [--webhook URL] [--notify changed|always]
                                         read the pages (or crawl the site) again on a schedule (a cron
                                         expression in UTC, or every so many seconds); each run is a
                                         job whose pages say how they changed since the run before;
                                         --webhook gets page.changed, page.removed and monitor.run.done
                                         (signed with SIFT_WEBHOOK_SECRET; --notify always: every run)
  monitor list                           your monitors: schedule, runs, next run, why a slot was passed
  monitor runs ID                        a monitor's runs, newest first (read each with results ID)
  monitor pause ID | resume ID | rm ID   stop its runs, start them again, delete it (its runs stay)
  search WORDS... [--site HOST] [--jobs ID,...] [--limit N] [--json]
                                         the pages your jobs fetched that have every word, best first:
                                         each its URL, title, job and idx, and a snippet
  webhook-secret                         print a new webhook secret (whsec_…)
  mcp                                    sift's tools for agents (MCP) on stdin/stdout
  help                                   this text

${FETCH_FLAGS_USAGE}
exit codes:
  0    done
  1    error: sift answered an error or could not be reached (stderr names the URL tried and how
       it was chosen); or sift stopped, or went away, while a command followed a job or wrote its
       results (what was written stays; stderr gives the watch or results command that resumes);
       or fetch printed a page the site answered with HTTP 400 or more, or whose verdict is not ok
       (the reason is on stderr)
  2    usage: an unknown or malformed flag or argument, a missing SIFT_TOKEN, an unreadable file
  3    partial: a job that batch --wait, crawl --wait, retry --wait or watch followed ended partial,
       failed or cancelled (not every target done)
  130  interrupted (Ctrl-C): what had come is written, and stderr says how to resume or cancel,
       and what the job's on_restart does to it if sift restarts before it ends
`;

type Command = (args: string[]) => Promise<void>;

const COMMANDS: Record<string, Command> = {
  serve: async (args) => {
    parse('serve', args, {}, 0);
    return (await import('./main')).serve();
  },
  migrate: async (args) => {
    parse('migrate', args, {}, 0);
    return (await import('./cli/admin')).migrate();
  },
  token: async ([sub, ...args]) => {
    if (sub !== 'create') usage('usage: sift token create CALLER --class fleet|restricted');
    return (await import('./cli/admin')).tokenCreate(args);
  },
  fetch: async (args) => (await import('./cli/fetch')).fetchCmd(args),
  parse: async (args) => (await import('./cli/parse')).parseCmd(args),
  batch: async (args) => (await import('./cli/jobs')).batchCmd(args),
  crawl: async (args) => (await import('./cli/crawl')).crawlCmd(args),
  map: async (args) => (await import('./cli/crawl')).mapCmd(args),
  llmstxt: async (args) => (await import('./cli/llmstxt')).llmstxtCmd(args),
  retry: async (args) => (await import('./cli/jobs')).retryCmd(args),
  jobs: async (args) => (await import('./cli/jobs')).jobsCmd(args),
  cancel: async (args) => (await import('./cli/jobs')).cancelCmd(args),
  purge: async (args) => (await import('./cli/jobs')).purgeCmd(args),
  deliveries: async (args) => (await import('./cli/jobs')).deliveriesCmd(args),
  redeliver: async (args) => (await import('./cli/jobs')).redeliverCmd(args),
  results: async (args) => (await import('./cli/results')).resultsCmd(args),
  watch: async (args) => (await import('./cli/results')).watchCmd(args),
  mcp: async (args) => (await import('./cli/mcp')).mcpCmd(args),
  monitor: async (args) => (await import('./cli/monitor')).monitorCmd(args),
  search: async (args) => (await import('./cli/search')).searchCmd(args),
  'webhook-secret': async (args) => {
    parse('webhook-secret', args, {}, 0);
    console.log(`whsec_${randomBytes(32).toString('base64')}`);
  },
};

export async function run(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === 'help' || cmd === '--help' || cmd === '-h') {
    process.stdout.write(USAGE);
    return;
  }
  const command = Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd] : undefined;
  if (!command) usage(`unknown command "${cmd}"; see sift help`);
  return command(rest);
}

if (require.main === module) {
  // A reader that stops reading (sift results ID | head) ends the command, not with a trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.ok);
    throw err;
  });
  loadEnvFile();
  run(process.argv.slice(2)).catch((err: Error) => {
    console.error(`sift: ${err instanceof CliError ? err.message : (err.stack ?? err.message)}`);
    process.exitCode = err instanceof CliError ? err.exitCode : EXIT.error;
  });
}
