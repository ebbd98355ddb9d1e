import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { Metadata } from '../extract/metadata';
import type { Format } from '../extract/extract';
import { VERDICTS, type Verdict } from '../extract/verdict';
import type { ActionResults, RenderScreenshot } from '../render/render-types';
import type { Chunk } from './chunks';
import { CHANGE_STATUSES, type ChangeStatus, type PageChanges } from './changes';

@ApiSchema({ name: 'MetadataDto' })
export class PageMetadata implements Metadata {
  @ApiProperty({ type: String, nullable: true }) author: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) published_at: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'en' }) language: string | null;
  @ApiProperty({ type: String, nullable: true }) site_name: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, nullable: true }) canonical_url: string | null;
  @ApiProperty({ type: String, nullable: true }) image: string | null;
  @ApiPropertyOptional({
    description:
      "A document's pages, all of them (not only those read): a PDF's or Word file's pages, a workbook's sheets, a deck's slides; web pages have none.",
    example: 12,
  })
  pages?: number;
  @ApiPropertyOptional({ description: 'Some of the text was read by OCR (an image, a scanned page).' })
  ocr?: boolean;
  @ApiPropertyOptional({
    description:
      'With `tokens: true`, `max_tokens` or "chunks": the tokens of `content` as sent (with `formats` alone, of their first text), in `tokenizer`\'s encoding.',
    example: 9,
  })
  tokens?: number;
  @ApiPropertyOptional({ description: 'The encoding `tokens` counts in.', example: 'o200k_base' })
  tokenizer?: string;
}

@ApiSchema({ name: 'LinkDto' })
export class PageLink {
  @ApiProperty() url: string;
  @ApiProperty() text: string;
}

@ApiSchema({ name: 'ChunkDto' })
export class PageChunk implements Chunk {
  @ApiProperty({
    description: 'A digest of its heading path and text: the same piece of a page keeps its id.',
    example: '3f1c9a0b7d2e4f61',
  })
  id: string;
  @ApiProperty({
    type: [String],
    description: 'The headings it is under, outermost first.',
    example: ['Guide', 'Install'],
  })
  heading_path: string[];
  @ApiProperty({ description: 'Its markdown.' }) text: string;
  @ApiProperty({ description: 'Its tokens (o200k_base).', example: 412 }) tokens: number;
}

/** The page in each content format asked for with `formats`, from the one fetch and extraction. */
@ApiSchema({ name: 'FormatsDto' })
export class PageFormats {
  @ApiPropertyOptional({ example: 'This domain is for use in examples.' }) markdown?: string;
  @ApiPropertyOptional({ example: 'This domain is for use in examples.' }) text?: string;
  @ApiPropertyOptional({
    description:
      'The article\'s own elements (no wrapper); a JSON page as `<pre><code class="language-json">`, escaped.',
    example: '<p>This domain is for use in examples.</p>',
  })
  html?: string;
  @ApiPropertyOptional({
    description:
      "With \"raw_html\" in `formats`: the page's html as served, decoded to UTF-8 (after a render, the browser's page); a PDF's html as read, a JSON or text page's text.",
  })
  raw_html?: string;
  @ApiPropertyOptional({
    type: [PageChunk],
    description:
      'With "chunks": the markdown as sent, in pieces: each heading begins one, and a section over `chunk_tokens` is split at blank lines, then at line ends, then between tokens. Without `chunk_overlap` the texts joined are the markdown. Counted in `bytes` and the caps as the markdown.',
  })
  chunks?: PageChunk[];
}

@ApiSchema({ name: 'RenderCountsDto' })
export class RenderCounts {
  @ApiProperty({ description: "Requests the page made in the browser, all through sift's proxy." })
  requests: number;
  @ApiProperty({ description: "Of them, those refused: the caller's address policy, or a render's caps." })
  blocked: number;
}

@ApiSchema({ name: 'ScreenshotDto' })
export class Screenshot implements RenderScreenshot {
  @ApiProperty({ enum: ['image/png'] }) type: 'image/png';
  @ApiProperty({ example: 1280 }) width: number;
  @ApiProperty({ example: 800 }) height: number;
  @ApiProperty({ description: 'The PNG, base64.' }) data: string;
}

@ApiSchema({ name: 'ActionScrapeDto' })
export class ActionScrape {
  @ApiProperty({ description: 'Where the page was when the scrape was taken.' }) url: string;
  @ApiProperty({ description: 'Its html at that point.' }) html: string;
}

@ApiSchema({ name: 'JavascriptReturnDto' })
export class JavascriptReturn {
  @ApiProperty({
    description: "The returned value's JavaScript type (`typeof`), or `error` when the script threw.",
    example: 'string',
  })
  type: string;
  @ApiProperty({ description: "The value as JSON carries it (undefined as null), or the error's message." })
  value: unknown;
}

@ApiSchema({ name: 'ActionResultsDto' })
export class PageActionResults implements ActionResults {
  @ApiProperty({ type: [Screenshot], description: 'Of each `screenshot` action, in order.' })
  screenshots: Screenshot[];
  @ApiProperty({ type: [ActionScrape], description: 'Of each `scrape` action, in order.' })
  scrapes: ActionScrape[];
  @ApiProperty({ type: [JavascriptReturn], description: 'Of each `executeJavascript` action, in order.' })
  javascriptReturns: JavascriptReturn[];
}

@ApiSchema({ name: 'ChangesDiffDto' })
export class ChangesDiff {
  @ApiProperty({
    description:
      'A unified diff of the markdown (`--- previous`, `+++ current`, hunks with 3 lines of context); "" when nothing changed. It counts in `bytes` and fills what the rest leaves of the output cap.',
  })
  text: string;
  @ApiProperty({ description: 'Lines added.' }) added: number;
  @ApiProperty({ description: 'Lines removed.' }) removed: number;
}

@ApiSchema({ name: 'ChangesDto' })
export class PageChangesView implements PageChanges {
  @ApiProperty({
    enum: CHANGE_STATUSES,
    description:
      "Against the caller's previous fetch of the URL with the same options: new (none, or the page was gone then), same, changed, removed (the site answers 404 or 410).",
  })
  status: ChangeStatus;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When that fetch was.' })
  previous_at: string | null;
  @ApiProperty({ type: ChangesDiff }) diff: ChangesDiff;
}

/**
 * What a fetch answers, on /v1/fetch and in every batch result: the one definition of its shape,
 * at run time and in the OpenAPI document. Cached and fresh answers are both serialized from it.
 */
@ApiSchema({ name: 'FetchResponseDto' })
export class FetchEnvelope {
  @ApiProperty({ example: 'https://example.com/' }) url: string;
  @ApiProperty({ example: 'https://example.com/' }) final_url: string;
  @ApiProperty({ description: 'The upstream HTTP status.', example: 200 }) status: number;
  @ApiProperty({ example: 'text/html; charset=utf-8' }) content_type: string;
  @ApiProperty({
    description:
      "The page's title (from its metadata or `<title>`). A heading that repeats it is not in the content, in any format.",
    example: 'Example Domain',
  })
  title: string;
  @ApiPropertyOptional({
    enum: ['markdown', 'text', 'html'],
    description:
      "`content`'s format: the `format` asked for, markdown when neither `format` nor `formats` is given; absent when only `formats` is.",
  })
  format?: Format;
  @ApiProperty({
    description:
      'The main content in `format`; "" when only `formats` is given. A JSON page: a fenced json block in markdown, `<pre><code>` in html, the JSON as served in text.',
    example: 'This domain is for use in examples.',
  })
  content: string;
  @ApiProperty({
    description:
      "UTF-8 bytes of `content`, of the texts in `formats` and of `screenshot`'s base64: what the output cap counts.",
    example: 35,
  })
  bytes: number;
  @ApiProperty({
    description:
      'Whether content, a text of `formats` or the links were cut (the output cap is shared: each text gets an equal share, what a shorter one leaves goes to the others, the links fill the rest).',
  })
  truncated: boolean;
  @ApiProperty({ description: 'Whether this came from the cache.' }) cached: boolean;
  @ApiProperty({
    description:
      'Whether the cached copy was confirmed by the site (a 304 to a conditional request) for this answer.',
  })
  revalidated: boolean;
  @ApiProperty({
    enum: VERDICTS,
    description:
      'What the page is: ok; empty (a 2xx html page of under 50 words, or a PDF with no text layer); challenge (a bot check, captcha wall or JavaScript-only shell); not_found (a 200 page that says it is missing); error_page (an upstream 4xx/5xx).',
  })
  verdict: Verdict;
  @ApiPropertyOptional({
    description: 'Why the verdict is what it is, where sift can say more.',
    example: 'no text layer, and no image large enough for OCR',
  })
  verdict_hint?: string;
  @ApiProperty({
    description:
      'Whether the page was rendered in Chromium (`render`: "always", or "auto" on a script shell or an empty page with scripts, where Chromium is available).',
  })
  rendered: boolean;
  @ApiPropertyOptional({ type: RenderCounts, description: 'When rendered: the requests the page made.' })
  render?: RenderCounts;
  @ApiPropertyOptional({
    type: Screenshot,
    description:
      'With `screenshot: true`, when rendered: a PNG of the viewport. Its base64 counts in `bytes` and the output cap first; one over the cap is left out (`truncated`).',
  })
  screenshot?: Screenshot;
  @ApiPropertyOptional({
    type: PageActionResults,
    description:
      'With `actions`: what they gave. It counts in `bytes` and the output cap after the screenshot and before the texts; each list keeps its items in order while they fit (the rest are left out: `truncated`).',
  })
  actions?: PageActionResults;
  @ApiPropertyOptional({
    type: PageChangesView,
    description:
      'With "changes" in `formats`: the page against your previous fetch of it (absent when the site answered another error than 404 or 410).',
  })
  changes?: PageChangesView;
  @ApiProperty({ format: 'date-time' }) fetched_at: string;
  @ApiProperty({
    description:
      "SHA-256 of `content` as sent; with only `formats`, of the page's extraction (the same whichever formats are asked).",
    example: 'sha256:0f…',
  })
  digest: string;
  @ApiProperty({ type: PageMetadata, description: 'What the page says about itself; null where unknown.' })
  metadata: PageMetadata;
  @ApiPropertyOptional({
    type: PageFormats,
    description:
      'With `formats`: the page in each content format asked for, from one fetch and one extraction (a cached page is written in a new format without being fetched again).',
  })
  formats?: PageFormats;
  @ApiPropertyOptional({
    type: [PageLink],
    description:
      'With the option links: true or "links" in `formats`, the whole page\'s links (absolute; navigation and footer too), each URL once, in document order.',
  })
  links?: PageLink[];
}
