// The client's commands for monitors: add, list, runs, pause, resume, rm.
import { int, parse } from './args';
import { api, call, getJson, usage } from './client';
import { FETCH_FLAGS, fetchOptions } from './fetch-options';
import { webhookOf } from './jobs';
import { readUrlFile } from './url-file';

interface MonitorLine {
  id: string;
  name: string;
  schedule?: string;
  every_s?: number;
  paused: boolean;
  runs: number;
  next_run_at: string;
  last_error: string | null;
}

const path = (id: string) => `/v1/monitors/${encodeURIComponent(id)}`;

export async function monitorCmd([sub, ...args]: string[]): Promise<void> {
  switch (sub) {
    case 'add':
      return add(args);
    case 'list': {
      parse('monitor list', args, {}, 0);
      const { monitors } = await getJson<{ monitors: MonitorLine[] }>(api(), '/v1/monitors');
      for (const m of monitors) console.log(line(m));
      return;
    }
    case 'runs': {
      const id = one('monitor runs', args);
      const { runs } = await getJson<{
        runs: {
          id: string;
          status: string;
          targets_done: number;
          targets_total: number;
          created_at: string;
        }[];
      }>(api(), `${path(id)}/runs`);
      for (const j of runs)
        console.log(`${j.id}  ${j.status.padEnd(9)} ${j.targets_done}/${j.targets_total}  ${j.created_at}`);
      return;
    }
    case 'pause':
    case 'resume': {
      const id = one(`monitor ${sub}`, args);
      const m = (await (await call(api(), 'POST', `${path(id)}/${sub}`)).json()) as MonitorLine;
      console.log(line(m));
      return;
    }
    case 'rm': {
      const id = one('monitor rm', args);
      await call(api(), 'DELETE', path(id));
      console.log(`${id} deleted`);
      return;
    }
    default:
      usage('usage: sift monitor add|list|runs|pause|resume|rm; see sift help');
  }
}

function one(cmd: string, args: string[]): string {
  const { positionals } = parse(cmd, args, {});
  if (!positionals[0]) usage(`${cmd} needs a monitor ID`);
  return positionals[0];
}

function line(m: MonitorLine): string {
  const when = m.schedule ? `cron ${m.schedule}` : `every ${m.every_s}s`;
  const state = m.paused ? 'paused' : `next ${m.next_run_at}`;
  return `${m.id}  ${m.name}  ${when}  ${m.runs} runs  ${state}${m.last_error ? `  (${m.last_error})` : ''}`;
}

async function add(args: string[]): Promise<void> {
  const { positionals, values } = parse(
    'monitor add',
    args,
    {
      ...FETCH_FLAGS,
      file: { type: 'string' },
      crawl: { type: 'string' },
      limit: { type: 'string' },
      every: { type: 'string' },
      schedule: { type: 'string' },
      webhook: { type: 'string' },
      notify: { type: 'string' },
    },
    10_001,
  );
  const [name, ...urls] = positionals;
  if (!name) usage('monitor add needs a NAME');
  const given = [urls.length > 0, values.file !== undefined, values.crawl !== undefined].filter(
    Boolean,
  ).length;
  if (given !== 1) usage('monitor add needs the pages: URLs, --file FILE, or --crawl URL (one of them)');
  if (values.limit !== undefined && values.crawl === undefined) usage('--limit needs --crawl URL');
  if ((values.every === undefined) === (values.schedule === undefined))
    usage('monitor add needs --every SECONDS or --schedule CRON (one of them)');
  const options = fetchOptions(values);
  const opts = Object.keys(options).length > 0 ? options : undefined;
  const webhook = webhookOf(values);
  const limit = int('limit', values.limit, 1);
  const body = {
    name,
    ...(values.crawl !== undefined
      ? {
          crawl: {
            url: values.crawl,
            ...(limit !== undefined ? { limit } : {}),
            ...(opts ? { options: opts } : {}),
          },
        }
      : {
          urls: values.file !== undefined ? readUrlFile(values.file).urls : urls,
          ...(opts ? { options: opts } : {}),
        }),
    ...(values.every !== undefined
      ? { every_s: int('every', values.every, 1) }
      : { schedule: values.schedule }),
    ...(webhook ? { webhook } : {}),
    ...(values.notify !== undefined ? { notify: values.notify } : {}),
  };
  const m = (await (await call(api(), 'POST', '/v1/monitors', { body })).json()) as MonitorLine;
  console.error(
    `monitor ${m.name}: ${m.schedule ? `cron ${m.schedule}` : `every ${m.every_s}s`}, first run ${m.next_run_at}`,
  );
  console.log(m.id);
}
