/**
 * A page's cache key: what tells two cached pages apart. A page fetched without asking robots.txt
 * is kept apart from those fetched asking it, so are other headers, cookies, selectors, render
 * options and a PDF's pages. The formats and links are not in it: each is written from the one
 * extraction kept.
 */
import { sha256Hex } from '../dcache';
import type { ExtractOptions } from '../extract/extraction';
import { renderKeyPart } from './browser-step';
import type { Cookies } from './cookies';
import type { FetchParams } from './fetch-params';

/**
 * Names what a cached page holds: raised when that changes, so pages kept before are fetched
 * again rather than answered without it (2: `links` are the whole page's; 3: `pages` chooses a
 * deck's slides, a workbook's sheets and an e-book's chapters).
 */
const KEY_REVISION = 3;

export function pageKeyOf(k: {
  callerClass: string;
  url: URL;
  headers: Record<string, string>;
  robots: boolean;
  extract: ExtractOptions;
  cookies?: Cookies;
  /** The egress proxy's name. */
  proxy?: string;
  /** The browser profile's version (owner, name, when saved). */
  profile?: string;
  /** The html as served is kept. */
  raw: boolean;
  p: Pick<
    FetchParams,
    'render' | 'wait_for' | 'wait_ms' | 'screenshot' | 'full_page' | 'actions' | 'pages' | 'ocr'
  >;
}): string {
  return sha256Hex(
    JSON.stringify([
      KEY_REVISION,
      k.callerClass,
      k.url.href,
      k.headers,
      ...(k.robots ? [] : ['robots:false']),
      ...(Object.keys(k.extract).length > 0 ? [k.extract] : []),
      ...(k.raw ? ['raw_html'] : []),
      ...(k.cookies ? [{ cookies: k.cookies.key }] : []),
      ...(k.proxy ? [{ proxy: k.proxy }] : []),
      ...(k.profile ? [{ profile: k.profile }] : []),
      ...renderKeyPart(k.p),
      ...(k.p.pages ? [{ pages: k.p.pages }] : []),
      ...(k.p.ocr && k.p.ocr !== 'auto' ? [{ ocr: k.p.ocr }] : []),
    ]),
  );
}
