import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import {
  IsHeaderMap,
  IsCookies,
  IsHttpUrl,
  IsPageRanges,
  IsProfileRef,
  IsSelector,
  IsSelectorList,
  MAX_URL_LENGTH,
} from './validators';
import { ACTION_TYPES, IsActions, MAX_ACTIONS } from './actions';
import {
  CHUNK_TOKENS,
  FETCH_FORMATS,
  FORMATS,
  IsChunkOverlap,
  IsFormatList,
  RENDER_MODES,
} from './format-rules';
import type { PageAction } from '../render/render-types';

export { FORMATS, RENDER_MODES, FETCH_FORMATS, CHUNK_TOKENS } from './format-rules';

/** The options of one fetch: the body of POST /v1/fetch, and of each batch target. */
export class FetchOptionsDto {
  /** Output format of `content`. */
  @IsOptional()
  @IsIn(FORMATS)
  format?: 'markdown' | 'text' | 'html';

  /**
   * Several formats from one fetch and one extraction: the envelope's `formats` has each content
   * format asked (`{markdown, text, html}`) and "raw_html" the page's html as served (after a
   * render, the browser's), "chunks" the markdown in pieces of at most `chunk_tokens` tokens each
   * (`{id, heading_path, text, tokens}`), "links" gives `links`, "changes" gives `changes` (the page against
   * your previous fetch of it with the same options). `content` is "" unless `format` is given
   * too. Each name at most once.
   */
  @ApiPropertyOptional({ enum: FETCH_FORMATS, isArray: true, uniqueItems: true, minItems: 1 })
  @IsOptional()
  @IsFormatList()
  formats?: ('markdown' | 'text' | 'html' | 'raw_html' | 'chunks' | 'links' | 'changes')[];

  /** Total time allowed for the fetch, in milliseconds. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(120000)
  timeout_ms?: number;

  /** Cap on the bytes of `content`; the class cap applies when lower. */
  @IsOptional()
  @IsInt()
  @Min(1)
  max_bytes?: number;

  /** true: `metadata.tokens` is the content's tokens (o200k_base), `metadata.tokenizer` its encoding. */
  @IsOptional()
  @IsBoolean()
  tokens?: boolean;

  /**
   * Cap on the tokens (o200k_base) of `content` and the texts of `formats`, shared as `max_bytes`
   * is; both caps hold, and `truncated` says either cut. Counts the tokens as `tokens` does.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  max_tokens?: number;

  /** With "chunks" in `formats`: at most this many tokens a piece (default 512). */
  @IsOptional()
  @IsInt()
  @Min(CHUNK_TOKENS.min)
  @Max(CHUNK_TOKENS.max)
  chunk_tokens?: number;

  /**
   * With "chunks": each piece after the first of its section begins with this many tokens (at
   * most) of the piece before, within `chunk_tokens`; at most half of `chunk_tokens` (default 0).
   */
  @IsOptional()
  @IsInt()
  @Min(0)
  @IsChunkOverlap()
  chunk_overlap?: number;

  /** How old a cached copy may be, in seconds; 0 fetches anew (and still stores). */
  @IsOptional()
  @IsInt()
  @Min(0)
  max_age_s?: number;

  /** Extra request headers (fleet callers only). */
  @IsOptional()
  @IsHeaderMap()
  headers?: Record<string, string>;

  /**
   * Cookies for the URL's site: a Cookie header's value (`"session=abc; theme=dark"`) or a list of
   * `{name, value, domain?, path?}` (at most 50). Each goes only where its scope says (the URL's
   * host, or the domain named, which the host must be under): a redirect to another site gets
   * none. Part of the cache key; never logged.
   */
  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', example: 'session=abc; theme=dark' },
      {
        type: 'array',
        maxItems: 50,
        items: {
          type: 'object',
          required: ['name', 'value'],
          properties: {
            name: { type: 'string' },
            value: { type: 'string' },
            domain: { type: 'string' },
            path: { type: 'string' },
          },
        },
      },
    ],
  })
  @IsOptional()
  @IsCookies()
  cookies?: string | { name: string; value: string; domain?: string; path?: string }[];

  /**
   * An egress proxy the operator named (SIFT_PROXIES) that the page's connections go through,
   * its robots.txt's and a render's included. sift still checks the target's address and asks the
   * proxy for that address. Unknown name: 400; one the caller's class may not use: 403; a proxy
   * that fails: 502 `proxy_error` (never a direct connection). Part of the cache key.
   */
  @ApiPropertyOptional({ example: 'office', maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'proxy must be the name of a proxy of the server' })
  proxy?: string;

  /**
   * One of the caller's browser profiles (POST /v1/profiles): its cookies go with the static
   * fetch (each where its domain and path say) and its whole storage state (cookies, localStorage)
   * into a render's browser. `save: true` renders the page and keeps the browser's state in the
   * profile afterwards (a login by `actions`, say). Another caller's profile is 404. The profile's
   * version is part of the cache key; its contents are in no answer, event or log.
   */
  @ApiPropertyOptional({
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' }, save: { type: 'boolean' } },
    example: { name: 'shop-login', save: true },
  })
  @IsOptional()
  @IsProfileRef()
  profile?: { name: string; save?: boolean };

  /** true: the envelope lists the whole page's links (`links: [{url, text}]`), navigation and footer too. */
  @IsOptional()
  @IsBoolean()
  links?: boolean;

  /** CSS selectors (at most 20): the content is what they match, instead of the main content found. */
  @IsOptional()
  @IsSelectorList()
  include_selectors?: string[];

  /** CSS selectors (at most 20): what they match is removed before the content is found. */
  @IsOptional()
  @IsSelectorList()
  exclude_selectors?: string[];

  /** false: fetch without asking the site's robots.txt (fleet callers only; 403 for others). */
  @IsOptional()
  @IsBoolean()
  robots?: boolean;

  /**
   * Rendering in Chromium: "never"; "auto" (default) renders only a page that is a script shell
   * or empty with scripts, once fetched; "always" renders every html page (503
   * render_unavailable where there is no Chromium).
   */
  @ApiPropertyOptional({ enum: RENDER_MODES, default: 'auto' })
  @IsOptional()
  @IsIn(RENDER_MODES)
  render?: 'never' | 'auto' | 'always';

  /** When rendered: a CSS selector (at most 512 characters) to wait for before the page is read. */
  @IsOptional()
  @IsSelector(512)
  wait_for?: string;

  /** When rendered: a further wait once loaded (and once `wait_for` matched), in milliseconds. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10000)
  wait_ms?: number;

  /** When rendered: a PNG of the viewport in the envelope's `screenshot` (counted in the output cap). */
  @IsOptional()
  @IsBoolean()
  screenshot?: boolean;

  /**
   * Steps taken on the rendered page once loaded (and once `wait_for`/`wait_ms` are done), in
   * order, at most 50, within `timeout_ms` (Firecrawl's list and shapes): `wait` (`milliseconds`
   * up to 60,000, or a CSS `selector` to appear), `click` (`selector`, the first match or `all`),
   * `write` (`text`, typed into the focused element: click it first), `press` (`key`, as
   * "Enter" or "Control+A"), `scroll` (`direction` "down" or "up", a screen's height; of the
   * page, or of the element at `selector`), `screenshot` (`fullPage`), `scrape` (the html at
   * that point), `executeJavascript` (`script`, the body of an async function: fleet callers,
   * where SIFT_ALLOW_PAGE_SCRIPTS=1). Asking actions renders the page (with render "never", 400).
   * Every request they cause passes the caller's address policy. What they give is `actions`.
   */
  @ApiPropertyOptional({
    type: 'array',
    maxItems: MAX_ACTIONS,
    items: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: [...ACTION_TYPES] },
        milliseconds: { type: 'integer', minimum: 1, maximum: 60000 },
        selector: { type: 'string', maxLength: 512 },
        all: { type: 'boolean' },
        text: { type: 'string', maxLength: 10000 },
        key: { type: 'string', maxLength: 64 },
        direction: { type: 'string', enum: ['up', 'down'] },
        fullPage: { type: 'boolean' },
        script: { type: 'string', maxLength: 100000 },
      },
    },
    example: [
      { type: 'click', selector: '#load-more' },
      { type: 'wait', milliseconds: 500 },
      { type: 'scrape' },
    ],
  })
  @IsOptional()
  @IsActions()
  actions?: PageAction[];

  /** With `screenshot`: the whole page, top to bottom (at most 16,384 pixels high), not the viewport. */
  @IsOptional()
  @IsBoolean()
  full_page?: boolean;

  /**
   * A document's pages to read, as ranges: "1-5,9", "3", "7-" (to the end); all by default, up to
   * SIFT_PDF_MAX_PAGES: a PDF's or a TIFF's pages, a deck's slides, a workbook's sheets, an
   * e-book's chapters. Pages left out make the answer `truncated`. Ignored for other pages and for
   * documents of one flow (Word, OpenDocument text, RTF, CSV).
   */
  @ApiPropertyOptional({ example: '1-5,9' })
  @IsOptional()
  @IsPageRanges()
  pages?: string;

  /**
   * OCR (Tesseract, in SIFT_OCR_LANGS): "auto" (default) reads an image (PNG, JPEG, WebP, TIFF)
   * and a PDF's pages that have no text layer; "always" every page of a PDF from its images,
   * in place of its text layer; "never" none. Text read so says `metadata.ocr: true`.
   */
  @ApiPropertyOptional({ enum: ['auto', 'always', 'never'], default: 'auto' })
  @IsOptional()
  @IsIn(['auto', 'always', 'never'])
  ocr?: 'auto' | 'always' | 'never';
}

export class FetchRequestDto extends FetchOptionsDto {
  /** The page to fetch: an absolute http or https URL. */
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  @IsHttpUrl()
  url: string;
}
