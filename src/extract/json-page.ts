/**
 * A JSON page in each format. The JSON is kept byte for byte, never parsed: a parse and
 * pretty-print would change what it says (integers past 2^53, duplicate keys, `1.0`) and would cost
 * the main thread in proportion to whatever a hostile page sends; these are single passes over
 * text already cut to the cache's cap.
 */
import type { Format } from './write';

/** markdown: a fenced `json` block; html: `<pre><code class="language-json">`, escaped; text: the JSON. */
export function jsonFormats(json: string, formats: readonly Format[]): Partial<Record<Format, string>> {
  const out: Partial<Record<Format, string>> = {};
  for (const f of formats) {
    if (f === 'text') out.text = json;
    else if (f === 'html') out.html = `<pre><code class="language-json">${escapeHtml(json)}</code></pre>`;
    else {
      const mark = fence(json);
      out.markdown = `${mark}json\n${json}\n${mark}`;
    }
  }
  return out;
}

/** A fence longer than any run of backticks in the text (CommonMark), at least three. */
function fence(text: string): string {
  let longest = 0;
  for (const run of text.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}
