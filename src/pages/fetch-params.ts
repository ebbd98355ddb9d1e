import type { Format } from '../extract/extract';
import type { PageAction } from '../render/render-types';
import type { AskedFormat } from './answer';
import type { RenderMode } from './browser-step';
import type { CookiesAsk } from './cookies';

/** What one fetch asks: POST /v1/fetch's body, a batch target's options with its URL. */
export interface FetchParams {
  url: string;
  /** `content`'s format. */
  format?: Format;
  /** Formats for `formats` (and "links"), from the same fetch and extraction. */
  formats?: AskedFormat[];
  timeout_ms?: number;
  max_bytes?: number;
  max_age_s?: number;
  headers?: Record<string, string>;
  /** false: robots.txt is not asked (fleet callers only). */
  robots?: boolean;
  links?: boolean;
  include_selectors?: string[];
  exclude_selectors?: string[];
  render?: RenderMode;
  wait_for?: string;
  wait_ms?: number;
  screenshot?: boolean;
  full_page?: boolean;
  /** Steps taken on the rendered page (a render is asked). */
  actions?: PageAction[];
  /** Cookies for the URL's site: a Cookie header's value, or a list (pages/cookies.ts). */
  cookies?: CookiesAsk;
  /** An egress proxy's name (SIFT_PROXIES). */
  proxy?: string;
  /** A PDF's pages to read ("1-5,9"). */
  pages?: string;
}
