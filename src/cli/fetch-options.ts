// The fetch options of the API (FetchOptionsDto) as flags, shared by `fetch` and `batch`: each
// flag is its field's name with dashes, and a server error naming a field is told with the flag.
import { actionList, headerMap, int } from './args';
import { usage } from './client';

export const FETCH_FLAGS = {
  format: { type: 'string' },
  formats: { type: 'string' },
  'timeout-ms': { type: 'string' },
  'max-bytes': { type: 'string' },
  tokens: { type: 'boolean' },
  'max-tokens': { type: 'string' },
  'chunk-tokens': { type: 'string' },
  'chunk-overlap': { type: 'string' },
  'max-age-s': { type: 'string' },
  header: { type: 'string', multiple: true },
  cookie: { type: 'string', multiple: true },
  links: { type: 'boolean' },
  'include-selectors': { type: 'string', multiple: true },
  'exclude-selectors': { type: 'string', multiple: true },
  'no-robots': { type: 'boolean' },
  render: { type: 'string' },
  'wait-for': { type: 'string' },
  'wait-ms': { type: 'string' },
  screenshot: { type: 'boolean' },
  'full-page': { type: 'boolean' },
  action: { type: 'string', multiple: true },
  proxy: { type: 'string' },
  profile: { type: 'string' },
  'save-profile': { type: 'boolean' },
  pages: { type: 'string' },
  ocr: { type: 'string' },
} as const;

export const FETCH_FLAGS_USAGE = `fetch options (for fetch, every target of a batch, and every page of a crawl):
  --format markdown|text|html            the format of content (default markdown)
  --formats F,F,...                      several formats of one fetch (markdown, text, html, raw_html, chunks,
                                         links, changes: how the page changed since your last fetch of it);
                                         fetch prints the whole envelope as JSON then
  --timeout-ms N                         time allowed for the fetch (1-120000)
  --max-bytes N                          cap on the bytes of content (the class cap applies when lower)
  --tokens                               count the tokens (o200k_base) of content (in --json's metadata)
  --max-tokens N                         cap on the tokens (o200k_base) of content
  --chunk-tokens N                       with --formats chunks: at most N tokens a piece (64-8192, default 512)
  --chunk-overlap N                      with chunks: each piece begins with N tokens of the one before
  --max-age-s N                          how old a cached copy may be; 0 fetches anew
  --header 'Name: value'                 an extra request header (fleet callers; repeat for more)
  --cookie 'name=value'                  a cookie for the URL's site, never sent elsewhere (repeat for more)
  --links                                also list the page's links
  --include-selectors CSS                the content is what the selector matches (repeat for more)
  --exclude-selectors CSS                remove what the selector matches first (repeat for more)
  --no-robots                            do not ask the site's robots.txt (fleet callers)
  --render never|auto|always             render in Chromium (default auto: only a script shell)
  --wait-for CSS                         when rendered, wait for what the selector matches
  --wait-ms N                            when rendered, wait this long more once loaded (0-10000)
  --screenshot                           when rendered, a PNG of the viewport (in the --json envelope)
  --full-page                            with --screenshot, the whole page (at most 16384 px high)
  --action JSON                          a step on the rendered page, in order (repeat for more, at most 50):
                                         '{"type":"click","selector":"#more"}', wait, write, press, scroll,
                                         screenshot, scrape, executeJavascript; what they give is in --json
  --profile NAME                         with the browser profile of that name (its cookies, its storage)
  --save-profile                         with --profile: render, and keep the browser's state in it after
  --proxy NAME                           through the server's egress proxy of that name (SIFT_PROXIES)
  --pages 1-5,9                          of a PDF, only these pages (default all)
  --ocr auto|always|never                OCR of images and scanned PDF pages (default auto)
`;

type FetchFlagValues = {
  format?: string;
  formats?: string;
  'timeout-ms'?: string;
  'max-bytes'?: string;
  tokens?: boolean;
  'max-tokens'?: string;
  'chunk-tokens'?: string;
  'chunk-overlap'?: string;
  'max-age-s'?: string;
  header?: string[];
  cookie?: string[];
  links?: boolean;
  'include-selectors'?: string[];
  'exclude-selectors'?: string[];
  'no-robots'?: boolean;
  render?: string;
  'wait-for'?: string;
  'wait-ms'?: string;
  screenshot?: boolean;
  'full-page'?: boolean;
  action?: string[];
  proxy?: string;
  profile?: string;
  'save-profile'?: boolean;
  pages?: string;
  ocr?: string;
};

/** The API's fetch options from the flags given; only those given, so the server's defaults hold. */
export function fetchOptions(v: FetchFlagValues): Record<string, unknown> {
  const o: Record<string, unknown> = {
    format: v.format,
    formats: v.formats?.split(',').map((f) => f.trim()),
    timeout_ms: int('timeout-ms', v['timeout-ms'], 1),
    max_bytes: int('max-bytes', v['max-bytes'], 1),
    tokens: v.tokens || undefined,
    max_tokens: int('max-tokens', v['max-tokens'], 1),
    chunk_tokens: int('chunk-tokens', v['chunk-tokens'], 1),
    chunk_overlap: int('chunk-overlap', v['chunk-overlap']),
    max_age_s: int('max-age-s', v['max-age-s']),
    headers: headerMap(v.header),
    cookies: v.cookie?.join('; '),
    links: v.links || undefined,
    include_selectors: v['include-selectors'],
    exclude_selectors: v['exclude-selectors'],
    robots: v['no-robots'] ? false : undefined,
    render: v.render,
    wait_for: v['wait-for'],
    wait_ms: int('wait-ms', v['wait-ms']),
    screenshot: v.screenshot || undefined,
    full_page: v['full-page'] || undefined,
    actions: actionList(v.action),
    proxy: v.proxy,
    profile: profileRef(v.profile, v['save-profile']),
    pages: v.pages,
    ocr: v.ocr,
  };
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/** JSON fields of a fetch or batch body, and the flag that sets each. */
export const FIELD_FLAGS: Record<string, string> = {
  format: '--format',
  formats: '--formats',
  timeout_ms: '--timeout-ms',
  max_bytes: '--max-bytes',
  tokens: '--tokens',
  max_tokens: '--max-tokens',
  chunk_tokens: '--chunk-tokens',
  chunk_overlap: '--chunk-overlap',
  max_age_s: '--max-age-s',
  headers: '--header',
  cookies: '--cookie',
  links: '--links',
  include_selectors: '--include-selectors',
  exclude_selectors: '--exclude-selectors',
  robots: '--no-robots',
  render: '--render',
  wait_for: '--wait-for',
  wait_ms: '--wait-ms',
  screenshot: '--screenshot',
  full_page: '--full-page',
  actions: '--action',
  proxy: '--proxy',
  profile: '--profile',
  pages: '--pages',
  ocr: '--ocr',
  ttl_s: '--ttl',
  on_restart: '--on-restart',
  ignore_invalid_urls: '--ignore-invalid-urls',
  idempotency_key: '--idempotency-key',
  'webhook.url': '--webhook',
  'webhook.events': '--webhook-events',
};

/**
 * A server message with the body's field names told as the flags that set them. A validation
 * message starts with the field's path, and several are joined with "; ".
 */
export function inFlags(message: string): string {
  return message
    .replace(/(^|; )(?:options\.)?([a-z_]+(?:\.[a-z_]+)?)(?= )/g, (m, start: string, field: string) =>
      FIELD_FLAGS[field] ? `${start}${FIELD_FLAGS[field]}` : m,
    )
    .replace(
      // An action's fields by the --action flag's place among them: "actions.0.type" is "--action 1: type".
      /(^|; )(?:options\.)?actions\.(\d+)(\.| )/g,
      (_m, start: string, i: string, sep: string) =>
        `${start}--action ${Number(i) + 1}${sep === '.' ? ': ' : ' '}`,
    );
}

/** --profile NAME [--save-profile] as the body's `profile`. */
function profileRef(name: string | undefined, save: boolean | undefined) {
  if (name === undefined) return save ? usage('--save-profile needs --profile NAME') : undefined;
  return { name, ...(save ? { save: true } : {}) };
}
