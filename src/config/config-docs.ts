import * as fs from 'node:fs';
import * as path from 'node:path';
import { SCHEMA } from './env.schema';
import type { Knob } from './knob';

/**
 * .env.example and the table of variables in docs/configuration.md, generated from SCHEMA. After a
 * change to the schema: `npm run config-docs` rewrites both;
 * test/unit/config-docs.spec.ts fails while either differs from what this makes.
 */

const sections = () =>
  Object.entries(SCHEMA).map(([name, knobs]) => [name, Object.values(knobs) as Knob[]] as const);

const HEADER = `# sift configuration. Copy to .env and edit; every variable here shows its default, but for the
# development token in SIFT_TOKENS. \`make run\` reads .env when it exists and this file otherwise.
# Generated from src/config/env.schema.ts by src/config/config-docs.ts: change it there.
`;

/** `text` as comment lines of at most 100 characters (a longer word stands alone). */
function comment(text: string): string {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + 1 + word.length <= 100) lines[last] += ` ${word}`;
    else lines.push(`# ${word}`);
  }
  return lines.map((l) => `${l}\n`).join('');
}

export function envExample(): string {
  const out = [HEADER];
  for (const [section, knobs] of sections()) {
    out.push(`\n## ${section}\n`);
    for (const k of knobs) {
      out.push(comment(k.doc));
      if (k.example?.note) out.push(comment(k.example.note));
      if (k.example && k.default === undefined) out.push(`# ${k.env}=${k.example.value}\n`);
      else out.push(`${k.env}=${k.example?.value ?? k.default ?? ''}\n`);
    }
  }
  return out.join('');
}

const UNITS: [number, string][] = [
  [1024 ** 3, 'GiB'],
  [1024 ** 2, 'MiB'],
  [1024, 'KiB'],
];

function shownDefault(k: Knob): string {
  if (k.shown) return `\`${k.shown}\``;
  if (k.default === undefined || k.default === '') return '(none)';
  if (!k.numeric) return `\`${k.default}\``;
  const n = Number(k.default);
  const unit = k.bytes ? UNITS.find(([size]) => n >= size && n % size === 0) : undefined;
  return unit ? `${n / unit[0]} ${unit[1]}` : k.default;
}

export const TABLE_START =
  '<!-- variables: generated from src/config/env.schema.ts by src/config/config-docs.ts -->';
export const TABLE_END = '<!-- end of variables -->';
/** The page that holds the table, from the project's root. */
export const DOCS_PAGE = 'docs/configuration.md';

/** The table of variables: a row per variable, by section, in the schema's order. */
export function docsTable(): string {
  const rows = ['| section | variable | default | meaning |', '|---|---|---|---|'];
  for (const [section, knobs] of sections()) {
    knobs.forEach((k, i) => {
      const cells = [i === 0 ? `\`${section}\`` : '', `\`${k.env}\``, shownDefault(k), k.doc];
      rows.push(`| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`);
    });
  }
  return `${TABLE_START}\n${rows.join('\n')}\n${TABLE_END}`;
}

/** `page` (the text of DOCS_PAGE) with its table replaced by docsTable(). */
export function withDocsTable(page: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${DOCS_PAGE} has no "${TABLE_START}" … "${TABLE_END}"`);
  return page.slice(0, start) + docsTable() + page.slice(end + TABLE_END.length);
}

/** The project's root: the nearest folder above with a package.json (from src/ or dist/src/). */
export function projectRoot(from = __dirname): string {
  let dir = from;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

if (require.main === module) {
  const root = projectRoot();
  fs.writeFileSync(path.join(root, '.env.example'), envExample());
  const page = path.join(root, DOCS_PAGE);
  fs.writeFileSync(page, withDocsTable(fs.readFileSync(page, 'utf8')));
  console.log(`wrote .env.example and the table of ${DOCS_PAGE}`);
}
