/**
 * Change tracking (format `changes`): a page against the caller's previous fetch of the same URL
 * with the same options, kept in its history (dcache/history-store.ts).
 */
import { Injectable } from '@nestjs/common';
import type { StructuredPatch } from 'diff';
import { AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { truncateUtf8 } from '../common/truncate';
import { callerKeyOf, HistoryStore, sha256Hex, type PageVersion } from '../dcache';
import type { Caller } from './caller-policy';

export const CHANGE_STATUSES = ['new', 'same', 'changed', 'removed'] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];

export interface PageChanges {
  status: ChangeStatus;
  /** When the caller fetched it before (ISO 8601); null for a page it never fetched. */
  previous_at: string | null;
  /** The markdown's unified diff against the previous fetch's, with its lines added and removed. */
  diff: { text: string; added: number; removed: number };
}

/** The markdown a version keeps to be compared with: more than this is compared as cut here. */
const KEPT_MARKDOWN_BYTES = 1024 * 1024;
/** Past this, a diff is given up for the whole of both texts (every line removed, then added). */
const DIFF_TIMEOUT_MS = 100;
/** A page the site says is gone: compared as no content. */
const GONE_STATUSES = new Set([404, 410]);

/** What a page is now, as the history compares it; undefined for a status that says neither. */
export function pageStateOf(
  status: number,
  markdown: string,
): { gone: boolean; markdown: string } | undefined {
  if (GONE_STATUSES.has(status)) return { gone: true, markdown: '' };
  if (status >= 400) return undefined;
  return { gone: false, markdown: truncateUtf8(markdown, KEPT_MARKDOWN_BYTES).text };
}

/**
 * The status against the version before: new (never fetched, or gone at the previous fetch),
 * same, changed, removed (404 or 410 now; also on a first fetch). The diff is of the markdown:
 * a removed page's is every line of its last content removed.
 */
export function changesOf(
  before: PageVersion | undefined,
  now: { gone: boolean; markdown: string; digest: string },
): PageChanges {
  const previous_at = before ? new Date(before.seenAt).toISOString() : null;
  const none = { text: '', added: 0, removed: 0 };
  if (now.gone) {
    if (before && !before.gone) return { status: 'removed', previous_at, diff: diffOf(before.markdown, '') };
    return { status: before ? 'same' : 'removed', previous_at, diff: none };
  }
  if (!before || before.gone) return { status: 'new', previous_at, diff: none };
  if (before.digest === now.digest) return { status: 'same', previous_at, diff: none };
  return { status: 'changed', previous_at, diff: diffOf(before.markdown, now.markdown) };
}

/** A unified diff (`--- previous`, `+++ current`, hunks with 3 lines of context) and its counts. */
export function diffOf(previous: string, current: string): PageChanges['diff'] {
  // Each text ends its last line, so a line added at the end is one line, not two.
  const a = endLine(previous);
  const b = endLine(current);
  // Loaded on first use: a server that never compares pages never holds it.
  const { FILE_HEADERS_ONLY, formatPatch, structuredPatch } = require('diff') as typeof import('diff');
  const patch =
    structuredPatch('previous', 'current', a, b, undefined, undefined, {
      context: 3,
      timeout: DIFF_TIMEOUT_MS,
    }) ?? wholePatch(a, b);
  let added = 0;
  let removed = 0;
  for (const h of patch.hunks) {
    for (const l of h.lines) {
      if (l.startsWith('+')) added++;
      else if (l.startsWith('-')) removed++;
    }
  }
  return { text: patch.hunks.length ? formatPatch(patch, FILE_HEADERS_ONLY) : '', added, removed };
}

const endLine = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);

/** Two texts too different to diff in time: one hunk, every line removed, then every line added. */
function wholePatch(a: string, b: string): StructuredPatch {
  const lines = (s: string) => (s === '' ? [] : s.replace(/\n$/, '').split('\n'));
  const old = lines(a);
  const now = lines(b);
  return {
    oldFileName: 'previous',
    newFileName: 'current',
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [
      {
        oldStart: 1,
        oldLines: old.length,
        newStart: 1,
        newLines: now.length,
        lines: [...old.map((l) => `-${l}`), ...now.map((l) => `+${l}`)],
      },
    ],
  };
}

/** Records each fetch asked for `changes` in the caller's history, and compares it with the one before. */
@Injectable()
export class ChangeTracker {
  constructor(
    private readonly history: HistoryStore,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * The page's changes for this fetch; undefined when its status says neither present nor gone
   * (5xx, 429…). `by` names a job's target, whose second try is told what its first was.
   */
  async track(
    caller: Caller,
    page: string,
    status: number,
    markdown: string,
    by?: string,
  ): Promise<PageChanges | undefined> {
    const state = pageStateOf(status, markdown);
    if (!state) return undefined;
    const digest = sha256Hex(state.markdown);
    return this.history.record(
      callerKeyOf(caller),
      page,
      { atMs: this.clock.nowMs(), digest, ...state, by },
      this.config.historyVersions,
      (before) => changesOf(before, { ...state, digest }),
    );
  }
}
