// `sift crawl URL` and `sift map URL`: a site read from its seed as a job (followed as a batch is,
// see jobs.ts), and a site's URLs listed without reading its pages.
import { int, parse } from './args';
import { api, ApiError, call, usage, type Reply } from './client';
import { FETCH_FLAGS, fetchOptions, inFlags } from './fetch-options';
import type { JobView } from './job-notes';
import { idemHeader, submitted, WAIT_FLAGS, webhookOf } from './jobs';

/** The flags of the site's scope, shared by crawl and map. */
export const SCOPE_FLAGS = {
  limit: { type: 'string' },
  sitemap: { type: 'string' },
  'llms-txt': { type: 'string' },
  'include-paths': { type: 'string', multiple: true },
  'exclude-paths': { type: 'string', multiple: true },
  'allow-subdomains': { type: 'boolean' },
} as const;

/** The body's scope fields that are not fetch options, and the flag that sets each. */
const SCOPE_FIELD_FLAGS: Record<string, string> = {
  limit: '--limit',
  max_depth: '--max-depth',
  include_paths: '--include-paths',
  exclude_paths: '--exclude-paths',
  allow_subdomains: '--allow-subdomains',
  allow_external: '--allow-external',
  ignore_query: '--ignore-query',
  sitemap: '--sitemap',
  llms_txt: '--llms-txt',
};

/**
 * Globs given comma-separated (and by repeating the flag). A comma inside braces belongs to the
 * glob (`/{docs,blog}/**`), so only those outside split.
 */
export function globList(values: string[] | undefined): string[] | undefined {
  if (!values?.length) return undefined;
  const globs: string[] = [];
  for (const v of values) {
    let depth = 0;
    let start = 0;
    for (let i = 0; i <= v.length; i++) {
      const c = v[i];
      if (c === '{') depth++;
      else if (c === '}') depth = Math.max(0, depth - 1);
      else if (i === v.length || (c === ',' && depth === 0)) {
        const g = v.slice(start, i).trim();
        if (g) globs.push(g);
        start = i + 1;
      }
    }
  }
  return globs;
}

/** A server message with the body's field names told as the flags that set them. */
export function inCrawlFlags(message: string): string {
  const scoped = message.replace(
    /(^|; )([a-z_]+)(?:\.(\d+))?(?= )/g,
    (m, start: string, field: string, nth: string | undefined) => {
      const flag = SCOPE_FIELD_FLAGS[field];
      if (!flag) return m;
      return `${start}${flag}${nth === undefined ? '' : ` (glob ${Number(nth) + 1})`}`;
    },
  );
  return inFlags(scoped);
}

/** One request whose refusal is told with the flags. */
export async function post(path: string, body: object, headers: Record<string, string> = {}): Promise<Reply> {
  try {
    return await call(api(), 'POST', path, { body, headers });
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(err.status, err.code, inCrawlFlags(err.detail), err.hint);
    throw err;
  }
}

export type ScopeValues = {
  limit?: string;
  sitemap?: string;
  'llms-txt'?: string;
  'include-paths'?: string[];
  'exclude-paths'?: string[];
  'allow-subdomains'?: boolean;
};

/** The scope fields of the flags given; only those given, so the server's defaults hold. */
export function scopeOf(url: string, v: ScopeValues): Record<string, unknown> {
  const o: Record<string, unknown> = {
    url,
    limit: int('limit', v.limit, 1),
    sitemap: v.sitemap,
    llms_txt: v['llms-txt'],
    include_paths: globList(v['include-paths']),
    exclude_paths: globList(v['exclude-paths']),
    allow_subdomains: v['allow-subdomains'] || undefined,
  };
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

export async function crawlCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('crawl', args, {
    ...WAIT_FLAGS,
    ...FETCH_FLAGS,
    ...SCOPE_FLAGS,
    'max-depth': { type: 'string' },
    'allow-external': { type: 'boolean' },
    'ignore-query': { type: 'boolean' },
    ttl: { type: 'string' },
    'on-restart': { type: 'string' },
    webhook: { type: 'string' },
    'webhook-events': { type: 'string' },
  });
  const url = positionals[0];
  if (!url) usage('crawl needs a URL to start from: sift crawl URL [options]; see sift help');
  if (values.out !== undefined && !values.wait)
    usage('--out needs --wait (or use: sift results ID --out FILE)');
  const options = fetchOptions(values);
  const maxDepth = int('max-depth', values['max-depth']);
  const ttl = int('ttl', values.ttl);
  const webhook = webhookOf(values);
  const res = await post(
    '/v1/crawl',
    {
      ...scopeOf(url, values),
      ...(maxDepth !== undefined ? { max_depth: maxDepth } : {}),
      ...(values['allow-external'] ? { allow_external: true } : {}),
      ...(values['ignore-query'] ? { ignore_query: true } : {}),
      ...(Object.keys(options).length > 0 ? { options } : {}),
      ...(ttl !== undefined ? { ttl_s: ttl } : {}),
      ...(values['on-restart'] ? { on_restart: values['on-restart'] } : {}),
      ...(webhook ? { webhook } : {}),
    },
    idemHeader(values['idempotency-key']),
  );
  await submitted(res, values, (job: JobView & { seed?: string; limit?: number }) =>
    job.limit === undefined ? `crawl of ${url}` : `crawl of ${job.seed ?? url}, at most ${job.limit} pages`,
  );
}

interface MapAnswer {
  links: { url: string; title: string | null; source: 'sitemap' | 'page' | 'llms_txt' }[];
}

export async function mapCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('map', args, { ...SCOPE_FLAGS, json: { type: 'boolean' } });
  const url = positionals[0];
  if (!url) usage('map needs a URL: sift map URL [options]; see sift help');
  const text = await (await post('/v1/map', scopeOf(url, values))).text();
  if (values.json) {
    process.stdout.write(`${text}\n`);
    return;
  }
  const { links } = JSON.parse(text) as MapAnswer;
  const from = (source: string) => links.filter((l) => l.source === source).length;
  const listed = from('llms_txt') > 0 ? `, ${from('llms_txt')} from llms.txt` : '';
  console.error(
    `# ${links.length} URLs: ${from('page')} from the page${listed}, ${from('sitemap')} from sitemaps`,
  );
  process.stdout.write(links.map((l) => `${l.url}\n`).join(''));
}
