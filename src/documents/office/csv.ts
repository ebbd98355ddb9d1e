import { parse } from 'csv-parse';
import { Gathered } from './gathered';
import type { OfficeRead } from './office-reader';
import { MAX_COLUMNS, MAX_ROWS } from './xlsx';

/** The delimiter its first line uses most of: a comma, a semicolon (Europe's spreadsheets) or a tab. */
function delimiterOf(text: string): string {
  const line = text.slice(0, Math.max(0, text.indexOf('\n')) || 4096);
  let best = ',';
  let most = -1;
  for (const d of [',', ';', '\t']) {
    const n = line.split(d).length;
    if (n > most) [best, most] = [d, n];
  }
  return best;
}

/**
 * A CSV file (csv-parse: quoted fields, embedded line ends, a byte-order mark) as one table, its
 * first row the header: at most MAX_ROWS rows of MAX_COLUMNS, the rest cut (truncated).
 */
export async function readCsv(bytes: Uint8Array, maxChars: number): Promise<OfficeRead> {
  const text = new TextDecoder('utf-8').decode(bytes);
  const records = await new Promise<string[][]>((resolve, reject) =>
    parse(
      text,
      {
        bom: true,
        delimiter: delimiterOf(text.replace(/^\ufeff/, '')),
        relax_column_count: true,
        relax_quotes: true,
        skip_empty_lines: true,
        to: MAX_ROWS + 1,
      },
      (err, out: string[][] | undefined) => (err ? reject(err) : resolve(out ?? [])),
    ),
  );
  let wide = false;
  const rows = records.slice(0, MAX_ROWS).map((r) => {
    if (r.length > MAX_COLUMNS && r.slice(MAX_COLUMNS).some((c) => c.trim() !== '')) wide = true;
    const cells = r.slice(0, MAX_COLUMNS).map((c) => c.replace(/\s+/g, ' ').trim());
    while (cells.length > 0 && cells.at(-1) === '') cells.pop();
    return cells;
  });
  const out = new Gathered(maxChars);
  const kept = rows.filter((r) => r.length > 0);
  if (kept.length > 0) out.add({ kind: 'table', rows: kept });
  return {
    pages: [{ page: 1, blocks: out.take() }],
    marker: null,
    truncated: records.length > MAX_ROWS || wide || out.truncated,
    metadata: { pages: 1 },
  };
}
