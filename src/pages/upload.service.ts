import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { FetchError, fileTooLarge, invalidRequest } from '../common/errors';
import { askedOf, envelopeOf, neededFormats } from './answer';
import type { Caller } from './caller-policy';
import type { FetchEnvelope } from './envelope';
import type { FetchParams } from './fetch-params';
import { PageLoader } from './page-loader';
import { isDocument } from './page-types';
import { pageKind } from '../fetch/decode';
import { DOWNLOAD_CAP } from '../fetch/fetcher';
import { DEFAULT_TIMEOUT_MS } from './page.service';

/** A file sent to be read, as the route received it. */
export interface UploadedFile {
  bytes: Buffer;
  contentType: string;
  name?: string;
}

/** What a parse asks: a fetch's options without the URL and what only a fetch of one does. */
export type ParseParams = Omit<FetchParams, 'url'>;

/** Media types by file name, for a file sent without a type that says what it is. */
const BY_EXTENSION: Record<string, string> = {
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xhtml': 'application/xhtml+xml',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.ods': 'application/vnd.oasis.opendocument.spreadsheet',
  '.odp': 'application/vnd.oasis.opendocument.presentation',
  '.epub': 'application/epub+zip',
  '.rtf': 'application/rtf',
};

/** Types that say nothing of a file: its name (or its bytes) tells instead. */
const OPAQUE = /^(application\/octet-stream|binary\/octet-stream|text\/plain)?$/i;

/**
 * POST /v1/parse: a file sent by the caller, read as a page of its type would be (a document in
 * the parser processes, html by the extraction, text kept) and answered in the same envelope,
 * under the caller's output cap. Nothing is fetched and nothing is cached: its `url` is
 * `upload:<name>`.
 */
@Injectable()
export class UploadService {
  constructor(
    private readonly loader: PageLoader,
    private readonly config: AppConfig,
  ) {}

  async parseJson(caller: Caller, file: UploadedFile, p: ParseParams, signal: AbortSignal): Promise<Buffer> {
    return Buffer.from(JSON.stringify(await this.parse(caller, file, p, signal)));
  }

  async parse(
    caller: Caller,
    file: UploadedFile,
    p: ParseParams,
    signal: AbortSignal,
  ): Promise<FetchEnvelope> {
    // The route reads no more; a file from elsewhere (MCP's parse tool) is held to the same cap.
    if (file.bytes.length > this.config.pdfMaxBytes) throw fileTooLarge(this.config.pdfMaxBytes);
    const name = path.basename(file.name ?? '').slice(0, 200) || 'file';
    const url = `upload:${encodeURIComponent(name)}`;
    const asked = askedOf(p);
    if (asked.changes) {
      throw invalidRequest(
        'formats: "changes" compares a URL with its last fetch; a file sent has none',
        'leave "changes" out of formats',
      );
    }
    const ext = path.extname(name).toLowerCase();
    const contentType =
      OPAQUE.test(file.contentType.split(';')[0].trim()) && BY_EXTENSION[ext]
        ? BY_EXTENSION[ext]
        : file.contentType;
    // A page's cap for what is not a document, as a fetch has it (the route took up to a document's).
    if (!isDocument(pageKind(contentType, file.bytes)) && file.bytes.length > DOWNLOAD_CAP) {
      throw new FetchError(
        'too_large',
        `the file is ${file.bytes.length} bytes, over the ${DOWNLOAD_CAP}-byte cap for a page`,
      );
    }
    const deadline = Date.now() + (p.timeout_ms ?? DEFAULT_TIMEOUT_MS);
    const extract = {
      ...(p.include_selectors?.length ? { include: p.include_selectors } : {}),
      ...(p.exclude_selectors?.length ? { exclude: p.exclude_selectors } : {}),
    };
    const page = await this.loader.loadUpload(
      {
        key: `upload ${createHash('sha256').update(file.bytes).digest('hex')}`,
        url: new URL(url),
        formats: neededFormats(asked),
        extract,
        raw: asked.raw,
        caller,
        headers: {},
        robots: false,
        signal,
        render: { mode: 'never', deadline },
        document: { pages: p.pages, deadline, ocr: p.ocr },
      },
      { url, finalUrl: url, status: 200, contentType, body: file.bytes },
    );
    const cap = Math.min(p.max_bytes ?? Infinity, this.config.limits[caller.callerClass].outputCap);
    return envelopeOf(url, asked, page, cap);
  }
}
