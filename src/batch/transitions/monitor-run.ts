import { truncateUtf8 } from '../../common/truncate';
import type { FetchEnvelope } from '../../pages/envelope';
import type { At } from './at';

/** An event's diff is cut here (the result holds it whole, within the output cap). */
export const EVENT_DIFF_BYTES = 64 * 1024;

/**
 * record a monitor's page: one that changed or went gives `page.changed` / `page.removed`, with
 * its URL and diff, before its target's own event (same transaction).
 */
export async function appendPageChange(at: At, jobId: string, idx: number, result: string): Promise<void> {
  const e = JSON.parse(result) as FetchEnvelope;
  const c = e.changes;
  if (!c || (c.status !== 'changed' && c.status !== 'removed')) return;
  const text = truncateUtf8(c.diff.text, EVENT_DIFF_BYTES);
  await at.events.append(
    at.tx,
    { jobId, type: c.status === 'changed' ? 'page.changed' : 'page.removed', at: at.now },
    {
      idx,
      url: e.url,
      status: e.status,
      previous_at: c.previous_at,
      diff: { text: text.text, added: c.diff.added, removed: c.diff.removed, truncated: text.truncated },
    },
  );
}
