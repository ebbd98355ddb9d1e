/**
 * Firecrawl's `changeTracking` format onto sift's `changes`, and back: the status and the time of
 * the previous scrape, and with the `git-diff` mode the diff as text and as Firecrawl's parsed form.
 */
import type { PageChanges } from '../../pages/changes';
import { FirecrawlUnsupported } from './firecrawl-unsupported';

type Body = Record<string, unknown>;

/** Whether a changeTracking format asks for the diff; 400 for what needs a model or a tag. */
export function changeTrackingOf(o: Body, where: string): { diff: boolean } {
  const extra = Object.keys(o).find((k) => k !== 'type' && k !== 'modes');
  if (extra) throw new FirecrawlUnsupported(`${where}formats: changeTracking.${extra.slice(0, 40)}`);
  const modes = o.modes ?? [];
  if (!Array.isArray(modes) || modes.some((m) => m !== 'git-diff' && m !== 'json'))
    throw new FirecrawlUnsupported(`${where}formats: changeTracking.modes`, 'must be a list of "git-diff"');
  if (modes.includes('json'))
    throw new FirecrawlUnsupported(
      `${where}formats: changeTracking.modes: json`,
      'needs a model: not supported',
    );
  return { diff: modes.includes('git-diff') };
}

interface Change {
  type: 'add' | 'del' | 'normal';
  normal?: boolean;
  ln?: number;
  ln1?: number;
  ln2?: number;
  content: string;
}

/** A document's `changeTracking`: Firecrawl's field names, the diff with `git-diff`. */
export function changeTrackingDoc(c: PageChanges, diff: boolean): Body {
  return {
    previousScrapeAt: c.previous_at,
    changeStatus: c.status,
    visibility: 'visible',
    ...(diff
      ? { diff: { text: c.diff.text, json: { files: c.diff.text ? [fileOf(c.diff.text)] : [] } } }
      : {}),
  };
}

/** A unified diff of one file as Firecrawl gives it (parse-diff's shape): its chunks and their lines. */
function fileOf(text: string): {
  from: string | null;
  to: string | null;
  chunks: { content: string; changes: Change[] }[];
} {
  const file = {
    from: null as string | null,
    to: null as string | null,
    chunks: [] as { content: string; changes: Change[] }[],
  };
  let old = 0;
  let now = 0;
  for (const line of text.split('\n')) {
    const head = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (line.startsWith('--- ') && file.chunks.length === 0) file.from = line.slice(4);
    else if (line.startsWith('+++ ') && file.chunks.length === 0) file.to = line.slice(4);
    else if (head) {
      old = Number(head[1]);
      now = Number(head[2]);
      file.chunks.push({ content: line, changes: [] });
    } else if (file.chunks.length > 0 && line !== '' && !line.startsWith('\\')) {
      const changes = file.chunks[file.chunks.length - 1].changes;
      if (line[0] === '+') changes.push({ type: 'add', ln: now++, content: line });
      else if (line[0] === '-') changes.push({ type: 'del', ln: old++, content: line });
      else changes.push({ type: 'normal', normal: true, ln1: old++, ln2: now++, content: line });
    }
  }
  return file;
}
